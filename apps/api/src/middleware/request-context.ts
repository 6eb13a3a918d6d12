import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '@testrun/core/logger';

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Path as logged: no query string, and the capability token of a view link masked. */
function loggablePath(originalUrl: string): string {
  const path = originalUrl.split('?')[0] ?? '';
  return path.replace(/^\/view\/([^/]+)\/([^/]+)\/[^/]+/, '/view/$1/$2/[token]');
}

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, else a new one), echoes it,
 * and writes one access-log line when the response is done. Never logs headers or bodies.
 */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const given = req.get('X-Request-Id');
    const requestId = given && SANE_REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    // Below the info level the access line would be built only to be dropped: no hook at all.
    if (!logger.isInfoEnabled()) {
      next();
      return;
    }
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const { auth } = res.locals;
      logger.info('request', {
        requestId,
        method: req.method,
        path: loggablePath(req.originalUrl),
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
        workspaceId: auth?.workspaceId,
        keyId: auth?.keyId,
      });
    });
    next();
  };
}
