import express, { type RequestHandler } from 'express';
import { capValue, overCap } from '@testrun/contracts';
import { ApiError } from '../errors';

/** The caps a route's body may be held to (a route declaration's `body.maxBytes`). */
type BodyCap = 'REQUEST_LIMITS.maxBodyBytes' | 'DEPLOYMENT_LIMITS.maxBodyBytes';

// Run requests are small, so a body near the limit is a mistake; a deployment carries a project file.
// No content encoding: a compressed body is a 415, never inflated. Over the cap, errors.ts answers
// 413 naming the cap of the parser's limit.
const parsers = new Map<BodyCap, RequestHandler>();

function parserFor(cap: BodyCap): RequestHandler {
  const known = parsers.get(cap);
  if (known) return known;
  const parser = express.json({ limit: capValue(cap), strict: false, type: 'application/json', inflate: false });
  parsers.set(cap, parser);
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

/**
 * The checks of a body the handler streams (a bundle): its media type (415) and, when the request
 * says its length, the cap (413 naming `BUNDLE_LIMITS.maxBytes`) before a byte is read; a body
 * without a length is counted as it is read.
 */
export function rawBody(mediaType: string, maxBytes: number): RequestHandler {
  return (req, _res, next) => {
    if (!req.is(mediaType)) {
      throw new ApiError(
        'unsupported_media_type',
        `The body must be sent as ${mediaType}, not ${req.get('Content-Type') ?? 'without a Content-Type'}.`,
      );
    }
    if (Number(req.get('Content-Length') ?? '0') > maxBytes) throw bundleTooLarge(maxBytes);
    next();
  };
}

/** 413 for a bundle over the cap, naming it. */
export function bundleTooLarge(maxBytes: number): ApiError {
  return new ApiError(
    'payload_too_large',
    overCap('BUNDLE_LIMITS.maxBytes', `The bundle is larger than the ${maxBytes} bytes this service accepts.`),
  );
}
