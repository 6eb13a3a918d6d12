import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a probe route answers. */
export type ProbeAnswer = { status: number; contentType: string; body: string };

/** Paths (exact, query ignored) to what they answer; GET and HEAD only. */
export type ProbeRoutes = Record<string, () => Promise<ProbeAnswer>>;

/** A listening probe server and how to stop it. */
export type ProbeServer = { server: Server; port: number; close: () => Promise<void> };

/**
 * A small HTTP server for what orchestrators and Prometheus ask (metrics, liveness, readiness), apart
 * from any tenant-facing port: GET/HEAD of the given paths, 404 for any other path, 405 for any
 * other method. An answer that throws is a 500 with no detail (the caller logs its own failures).
 * Resolves once listening on `host`:`port` (0 picks a free port).
 */
export async function startProbeServer(routes: ProbeRoutes, at: { port: number; host: string }): Promise<ProbeServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    const send = (answer: ProbeAnswer, headers: Record<string, string> = {}) => {
      res.writeHead(answer.status, {
        'Content-Type': answer.contentType,
        'Content-Length': Buffer.byteLength(answer.body),
        'Cache-Control': 'no-store',
        ...headers,
      });
      res.end(req.method === 'HEAD' ? undefined : answer.body);
    };
    if (!route) {
      send({ status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(
        { status: 405, contentType: 'text/plain; charset=utf-8', body: 'method not allowed\n' },
        { Allow: 'GET, HEAD' },
      );
      return;
    }
    route().then(send, () => send({ status: 500, contentType: 'text/plain; charset=utf-8', body: 'internal error\n' }));
  });
  // Probes keep no connections worth waiting for when the process stops.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A JSON answer of a probe route. */
export function jsonAnswer(status: number, value: unknown): ProbeAnswer {
  return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) };
}
