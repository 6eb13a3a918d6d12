import type { Request, RequestHandler } from 'express';
import { overCap, REQUEST_LIMITS, unstorableReason } from '@testrun/contracts';
import { ApiError } from '../errors';

/** Methods some route answers; anything else is a 405 before any route runs. */
const ANSWERED_METHODS = new Set(['GET', 'HEAD', 'POST']);

/** The methods the URL accepts, for the Allow header of a 405. */
function allowedMethods(path: string): string {
  if (ACTION_PATH.test(path)) return 'POST';
  return COLLECTION_PATH.test(path) ? 'GET, HEAD, POST' : 'GET, HEAD';
}

/** The URLs that only act (cancel, rerun, activate): POST alone. */
const ACTION_PATH =
  /^\/api\/v1\/(runs\/[^/]+\/cancel|suite-runs\/[^/]+\/(cancel|rerun)|projects\/[^/]+\/deployments\/[^/]+\/activate)\/?$/;

/** The collections that list and create (runs, a project's deployments). */
const COLLECTION_PATH = /^\/api\/v1\/(runs|projects\/[^/]+\/deployments)\/?$/;

function badRequest(detail: string): ApiError {
  return new ApiError('bad_request', detail);
}

/** Decodes every path segment strictly; a malformed escape or text Postgres cannot store is a 400. */
function checkPath(rawPath: string): void {
  for (const segment of rawPath.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw badRequest('The URL path holds a malformed percent-escape.');
    }
    const reason = unstorableReason(decoded);
    if (reason) throw badRequest(`The URL path ${reason}.`);
  }
}

function checkQuery(rawUrl: string): void {
  const at = rawUrl.indexOf('?');
  if (at < 0) return;
  for (const [name, value] of new URLSearchParams(rawUrl.slice(at + 1))) {
    const reason = unstorableReason(name) ?? unstorableReason(value);
    if (reason) throw badRequest(`The query string ${reason}.`);
  }
}

function checkHeaders(req: Request): void {
  const count = req.rawHeaders.length / 2;
  if (count > REQUEST_LIMITS.maxHeaderCount) {
    throw new ApiError(
      'request_header_fields_too_large',
      overCap(
        'REQUEST_LIMITS.maxHeaderCount',
        `The request has ${count} header fields; at most ${REQUEST_LIMITS.maxHeaderCount} are accepted.`,
      ),
    );
  }
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const reason = unstorableReason(req.rawHeaders[i + 1] ?? '');
    if (reason) throw badRequest(`The header ${req.rawHeaders[i] ?? ''} ${reason}.`);
  }
}

/**
 * The request-wide checks every route relies on, before any route runs: the method (405 with Allow),
 * the header count (431), and the path, query and header text (400 for a malformed percent-escape,
 * a NUL or an unpaired surrogate, none of which Postgres can store). Bodies get the same text check
 * in contracts' validation.
 */
export const requestHygiene: RequestHandler = (req, _res, next) => {
  if (!ANSWERED_METHODS.has(req.method)) {
    throw new ApiError('method_not_allowed', `The method ${req.method} is not allowed on this URL.`, {
      headers: { Allow: allowedMethods(req.path) },
    });
  }
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    throw badRequest('An HTTP/1.1 request must carry a Host header.');
  }
  checkHeaders(req);
  checkPath(req.path);
  checkQuery(req.originalUrl);
  next();
};
