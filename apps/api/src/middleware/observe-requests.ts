import type { Request, RequestHandler, Response } from 'express';
import { UNMATCHED_ROUTE, type ApiMetrics } from '../metrics';

/**
 * Marks where a router is mounted (`res.locals.mount`), so the request's route template is known
 * even after an error left the router (Express then restores `req.baseUrl` to the parent's).
 */
export const markMount: RequestHandler = (req, res, next) => {
  res.locals.mount = req.baseUrl;
  next();
};

/**
 * The route template of a finished request: the mount plus the matched route's path
 * (`/api/v1/runs/:runId`), `<mount>/*` for a request refused inside a mount before any route
 * matched (a 401 or 429), else {@link UNMATCHED_ROUTE}. Never the raw path: ids stay out of labels.
 */
function routeTemplate(req: Request, res: Response): string {
  const route = req.route as { path?: unknown } | undefined;
  const mount = res.locals.mount ?? req.baseUrl;
  if (typeof route?.path === 'string') return route.path === '/' ? mount || '/' : mount + route.path;
  return res.locals.mount ? `${res.locals.mount}/*` : UNMATCHED_ROUTE;
}

/**
 * Observes every request when its response is done: its duration by route template, method and
 * status; a 429 as a rate-limit refusal (scope `key` when the request had authenticated, since only
 * the per-key limit refuses those, else `address`); an `Idempotent-Replayed` answer as a replay.
 * One listener and a few map look-ups per request.
 */
export function observeRequests(metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const status = res.statusCode;
      metrics.observeRequest(
        routeTemplate(req, res),
        req.method,
        status,
        Number(process.hrtime.bigint() - started) / 1e9,
      );
      if (status === 429) metrics.countRateLimited(res.locals.auth ? 'key' : 'address');
      if (res.getHeader('Idempotent-Replayed') === 'true') metrics.countReplay(status);
    });
    next();
  };
}
