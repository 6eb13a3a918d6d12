import express, { type RequestHandler } from 'express';
import { REQUEST_LIMITS } from '@testrun/contracts';
import { ApiError } from '../errors';

// Run requests are small, so a body near the limit is a mistake.
// No content encoding: a compressed body is a 415, never inflated.
const parseJson = express.json({
  limit: REQUEST_LIMITS.maxBodyBytes,
  strict: false,
  type: 'application/json',
  inflate: false,
});

/**
 * Parses a JSON body, after authentication and rate limiting (a malformed body with a bad key is
 * still a 401). A body of another media type is a 415; a missing body is left undefined and the
 * route's validation says what is wrong.
 */
export const jsonBody: RequestHandler[] = [
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
  parseJson,
];
