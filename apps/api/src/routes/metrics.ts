import type { RequestHandler } from 'express';
import type { Registry } from 'prom-client';

/** GET /metrics: the registry in Prometheus's text format, never cached. */
export function metricsHandler(registry: Registry): RequestHandler {
  return async (_req, res) => {
    const body = await registry.metrics();
    res.setHeader('Content-Type', registry.contentType).setHeader('Cache-Control', 'no-store').send(body);
  };
}
