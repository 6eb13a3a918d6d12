import type { ErrorRequestHandler, Response } from 'express';
import {
  overCap,
  PROBLEMS,
  DEPLOYMENT_LIMITS,
  REQUEST_LIMITS,
  problemType,
  type ApiKeyScope,
  type Problem,
  type ProblemCode,
  type ProblemFieldError,
} from '@testrun/contracts';
import type { Logger } from '@testrun/core/logger';

/** The one error the API throws on purpose; the error middleware turns it into problem+json. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly options: {
      errors?: ProblemFieldError[];
      headers?: Record<string, string>;
      /** Of `insufficient_scope`: the scope the request needs (the body's `required_scope`). */
      requiredScope?: ApiKeyScope;
    } = {},
  ) {
    super(detail);
    this.status = PROBLEMS[code].status;
  }
}

/** The RFC 9457 body of a problem: the same bytes for the same code and detail, whoever asks. */
export function problemBody(
  code: ProblemCode,
  detail: string,
  errors?: ProblemFieldError[],
  requiredScope?: ApiKeyScope,
): Problem {
  const body: Problem = {
    type: problemType(code),
    title: PROBLEMS[code].title,
    status: PROBLEMS[code].status,
    detail,
    code,
  };
  if (errors && errors.length > 0) body.errors = errors;
  if (requiredScope) body.required_scope = requiredScope;
  return body;
}

function sendProblem(res: Response, error: ApiError): void {
  for (const [name, value] of Object.entries(error.options.headers ?? {})) res.setHeader(name, value);
  if (error.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  const { errors, requiredScope } = error.options;
  // RFC 6750's answer to a token without the scope a resource needs.
  if (requiredScope) res.setHeader('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${requiredScope}"`);
  res
    .status(error.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(error.code, error.detail, errors, requiredScope)));
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  // Postgres: admin shutdown, crash shutdown, cannot connect now ("starting up"), too many connections
  '57P01',
  '57P02',
  '57P03',
  '53300',
  // Prisma: cannot reach the database, timed out, server closed the connection, connection pool timeout
  'P1001',
  'P1002',
  'P1017',
  'P2024',
]);
/** Postgres class 08: connection exception (08000, 08003, 08006, 08001, 08004, ...). */
const CONNECTION_EXCEPTION_CLASS = /^08[0-9A-Z]{3}$/;
/** The `kind` of @prisma/adapter-pg's DriverAdapterError cause when the database cannot be used now. */
const UNAVAILABLE_ADAPTER_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
  'TlsConnectionError',
]);
const UNAVAILABLE_MESSAGE =
  /ECONNREFUSED|Connection is closed|connection terminated|timeout exceeded when trying to connect|Can't reach database|Stream isn't writeable|Reached the max retries per request limit|DatabaseNotReachable|SocketTimeout|connect ETIMEDOUT|the database system is (starting up|shutting down|in recovery mode)/i;

type ErrorLike = {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  kind?: unknown;
  cause?: unknown;
  errors?: unknown;
  meta?: { driverAdapterError?: unknown };
};

function saysUnavailable(e: ErrorLike): boolean {
  if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || CONNECTION_EXCEPTION_CLASS.test(e.code)))
    return true;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e.kind === 'string' && UNAVAILABLE_ADAPTER_KINDS.has(e.kind)) return true;
  return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
}

/**
 * True when an error says Postgres or Redis cannot be reached or cannot serve now (the fault is not
 * the request's and a retry later may succeed). Looks through everything that wraps a driver
 * error: `cause` chains, AggregateError's `errors` (a refused connection to each address of a
 * name), and Prisma's `meta.driverAdapterError`, where Prisma 7 puts the pg error it reports as
 * P2010/P2039 (so a 57P03 "starting up" arrives as a Prisma request error).
 */
export function isUnavailableError(error: unknown): boolean {
  const pending: unknown[] = [error];
  for (let seen = 0; pending.length > 0 && seen < 32; seen++) {
    const current = pending.shift();
    if (typeof current !== 'object' || current === null) continue;
    const e: ErrorLike = current;
    if (saysUnavailable(e)) return true;
    pending.push(e.cause, e.meta?.driverAdapterError);
    if (Array.isArray(e.errors)) pending.push(...(e.errors as unknown[]));
  }
  return false;
}

/** Maps body-parser failures to problems; returns null for anything else. */
function fromBodyParser(error: unknown): ApiError | null {
  if (typeof error !== 'object' || error === null || !('type' in error)) return null;
  switch (error.type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_body', 'The body is not valid JSON.', {
        errors: [{ path: '', message: 'must be valid JSON' }],
      });
    case 'entity.too.large': {
      // The parser's limit says which cap it is: a deployment's body has a larger one.
      const deployment = 'limit' in error && error.limit === DEPLOYMENT_LIMITS.maxBodyBytes;
      return new ApiError(
        'payload_too_large',
        deployment
          ? overCap(
              'DEPLOYMENT_LIMITS.maxBodyBytes',
              `The body is larger than the ${DEPLOYMENT_LIMITS.maxBodyBytes / (1024 * 1024)} MiB a deployment may be.`,
            )
          : overCap(
              'REQUEST_LIMITS.maxBodyBytes',
              `The body is larger than the ${REQUEST_LIMITS.maxBodyBytes / 1024} KB the API accepts.`,
            ),
      );
    }
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new ApiError('unsupported_media_type', 'The body must be UTF-8 JSON without content encoding.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ApiError('invalid_body', 'The body could not be read.');
    default:
      // Any other refusal of the body parser (an http-errors 4xx without a type) is the body's fault.
      if ('status' in error && typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
        return new ApiError('invalid_body', 'The body could not be read.');
      }
      return null;
  }
}

/**
 * The one error middleware: every failure leaves as application/problem+json, and no stack trace,
 * SQL or driver message ever reaches a client (they go to the log instead).
 */
export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let problem: ApiError;
    if (error instanceof ApiError) problem = error;
    else {
      const parsed = fromBodyParser(error);
      if (parsed) problem = parsed;
      else if (isUnavailableError(error)) {
        logger.warn('dependency unavailable', { requestId: res.locals.requestId, error: describeError(error) });
        problem = new ApiError(
          'service_unavailable',
          'A backing service (Postgres or Redis) cannot be reached; retry later.',
          { headers: { 'Retry-After': '5' } },
        );
      } else {
        logger.error('unhandled error', {
          requestId: res.locals.requestId,
          error: describeError(error),
          stack: error instanceof Error ? error.stack : undefined,
        });
        problem = new ApiError('internal_error', 'The request could not be handled because of an internal fault.');
      }
    }
    if (res.headersSent) {
      req.socket.destroy();
      return;
    }
    sendProblem(res, problem);
  };
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** The message of anything thrown, for logs: an Error's message, else its string form. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
