// What the API's middleware leaves on `res.locals`, declared once for every handler (Express reads
// this global interface into the type of `res.locals`).
import type { RequestCount } from './redis';
import type { AuthContext } from './services/auth';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express declares Locals in this global namespace; augmenting it is the only way in.
  namespace Express {
    interface Locals {
      /** Set by the request context on every request: the caller's sane X-Request-Id or a new one. */
      requestId: string;
      /** Set by authentication on the API routes; absent on unauthenticated routes. */
      auth?: AuthContext;
      /** Set by authentication when it already counted the request against its key's rate limit. */
      requestCount?: RequestCount;
      /** Set by `markMount` where a router is mounted: the base of the request's route template (metrics). */
      mount?: string;
    }
  }
}
