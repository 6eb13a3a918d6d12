import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { overCap, REQUEST_LIMITS, type ProblemCode } from '@testrun/contracts';
import type { Logger } from '@testrun/core/logger';
import { problemBody } from './errors';

/** What a parse error of Node's HTTP server means for the client, by the error's code. */
function clientProblem(code: string | undefined): { code: ProblemCode; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'request_header_fields_too_large',
        detail: overCap(
          'REQUEST_LIMITS.maxHeaderBytes',
          `The request line and headers are larger than the ${REQUEST_LIMITS.maxHeaderBytes} bytes the API accepts.`,
        ),
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { code: 'payload_too_large', detail: 'The chunk extensions of the body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return { code: 'request_timeout', detail: 'The request did not arrive in time.' };
    default:
      return { code: 'bad_request', detail: 'The request is not well-formed HTTP/1.1 and cannot be parsed.' };
  }
}

/** Connections already answered and closing: a parse error Node reports again on them is not answered twice. */
const answered = new WeakSet<Duplex>();

/** How long a refused connection may go on sending before it is cut off (see {@link answerAndClose}). */
const LINGER_MS = 5_000;

/**
 * Writes `answer` and closes the connection. What the client still sends (the rest of a body the
 * API will not read) is read and dropped: left unread it would fill the socket's receive buffer,
 * the client's close could never arrive behind it, and the socket would stay open for good (an
 * open file per such client, and a server that never finishes closing). A client that neither
 * stops sending nor closes is cut off after {@link LINGER_MS}.
 */
function answerAndClose(socket: Duplex, answer: string): void {
  answered.add(socket);
  const cutOff = setTimeout(() => socket.destroy(), LINGER_MS);
  cutOff.unref();
  socket.once('close', () => {
    clearTimeout(cutOff);
  });
  socket.on('data', () => undefined);
  socket.resume();
  socket.end(answer);
}

function problemJson(code: ProblemCode, detail: string): string {
  return JSON.stringify(problemBody(code, detail));
}

/**
 * Answers a request Node's parser refused (malformed framing, oversized header block, ...) with a
 * problem document instead of Node's bare status line, then closes the connection: after a parse
 * error the byte stream cannot be trusted for another request.
 */
function answerClientError(logger: Logger, error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  // Bytes that follow a parse error reach the failed parser again and are reported again: dropped.
  if (answered.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const problem = clientProblem(error.code);
  const body = problemJson(problem.code, problem.detail);
  const status = problemBody(problem.code, problem.detail).status;
  const requestId = randomUUID();
  logger.info('request refused by the HTTP parser', { requestId, status, reason: error.code });
  answerAndClose(
    socket,
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Cache-Control: no-store',
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/** An Expect other than 100-continue (which Node answers itself): 417 as a problem. */
function answerExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const body = problemJson(
    'expectation_failed',
    'The Expect header asks for something other than 100-continue, which the API cannot meet.',
  );
  res.writeHead(417, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': randomUUID(),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * CONNECT asks the API to be a proxy, which it is not: 405 as a problem, then the tunnel is closed.
 * Node hands the socket over as it is (no parser, no timeouts, not among the server's connections),
 * so closing it is up to this answer.
 */
function answerConnect(socket: Duplex): void {
  const body = problemJson('method_not_allowed', 'The method CONNECT is not allowed on this URL.');
  answerAndClose(
    socket,
    [
      'HTTP/1.1 405 Method Not Allowed',
      'Content-Type: application/problem+json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Allow: GET, HEAD',
      `X-Request-Id: ${randomUUID()}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
  );
}

/**
 * The HTTP server of the API: the express app behind the request limits of contracts, with the
 * server's own protocol errors answered as problem documents too.
 */
export function createApiServer(app: Express, logger: Logger): Server {
  // A missing Host is refused by the request checks (as a problem), not by Node's bare 400.
  const server = createServer({ maxHeaderSize: REQUEST_LIMITS.maxHeaderBytes, requireHostHeader: false }, app);
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    answerClientError(logger, error, socket);
  });
  server.on('checkExpectation', answerExpectation);
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    answerConnect(socket);
  });
  return server;
}
