import express, { type RequestHandler } from 'express';
import { capValue, overCap } from '@testrun/contracts';
import { ApiError } from '../errors';

type BodyCap = 'REQUEST_LIMITS.maxBodyBytes' | 'DEPLOYMENT_LIMITS.maxBodyBytes';

// Run requests are small, so a body near the limit is a mistake; a deployment carries a project file.
// No content encoding: a compressed body is a 415, never inflated.
const parsers = new Map<BodyCap, RequestHandler>();

function parserFor(cap: BodyCap): RequestHandler {
  let parser = parsers.get(cap);
  if (!parser) {
    const parse = express.json({ limit: capValue(cap), strict: false, type: 'application/json', inflate: false });
    // Over the cap is a 413 that names this route's cap (the default one is named by errors.ts too).
    parser = (req, res, next) =>
      parse(req, res, (error?: unknown) => {
        const tooLarge =
          typeof error === 'object' && error !== null && 'type' in error && error.type === 'entity.too.large';
        if (!tooLarge) return next(error);
        const size = capValue(cap);
        const shown = size >= 1024 * 1024 ? `${size / (1024 * 1024)} MiB` : `${size / 1024} KB`;
        next(new ApiError('payload_too_large', overCap(cap, `The body is larger than the ${shown} the API accepts.`)));
      });
    parsers.set(cap, parser);
  }
  return parser;
}

/**
 * Parses a JSON body of at most `cap` bytes, after authentication and rate limiting (a malformed
 * body with a bad key is still a 401). A body of another media type is a 415; a missing body is
 * left undefined and the route's validation says what is wrong.
 */
export function jsonBody(cap: BodyCap = 'REQUEST_LIMITS.maxBodyBytes'): RequestHandler[] {
  return [
    (req, _res, next) => {
      const hasBody = req.get('Transfer-Encoding') !== undefined || (req.get('Content-Length') ?? '0') !== '0';
      if (hasBody && !req.is('application/json')) {
        throw new ApiError(
          'unsupported_media_type',
          `The body must be sent as application/json, not ${req.get('Content-Type') ?? 'without a Content-Type'}.`,
        );
      }
      next();
    },
    parserFor(cap),
  ];
}
