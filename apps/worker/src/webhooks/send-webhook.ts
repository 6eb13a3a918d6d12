import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '@testrun/core/logger';
import { TargetUnresolvedError, type LookupAll, type TargetPolicy } from '@testrun/core/target-policy';
import { pinnedLookup, resolveAndCheck } from '../network/checked-connection';

/** One POST of a webhook message. */
export type WebhookRequest = {
  url: string;
  /** The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
  headers: Record<string, string>;
  body: string;
  /** The deployment's target policy narrowed by the workspace's own denied targets. */
  policy: TargetPolicy;
  lookup: LookupAll;
  /** The whole attempt, connection to last byte of the answer. */
  timeoutMs: number;
};

/**
 * What one attempt came to: `ok` for a 2xx answer; otherwise the status or an error sentence, and
 * `timedOut` when the whole exchange did not end within the timeout.
 */
export type WebhookResponse = {
  ok: boolean;
  status: number | null;
  error: string | null;
  timedOut: boolean;
  durationMs: number;
};

/**
 * POSTs a message under the target network policy, as the worker's egress proxy does for test
 * traffic: the host is resolved once, every address it resolves to is checked, and the connection
 * goes to a checked address. Redirects are not followed (a 3xx is a failed attempt). The answer's
 * body is read and dropped: only its status is kept. The timeout bounds the whole exchange, so an
 * endpoint that sends its answer a byte at a time is cut off at it too.
 */
export async function sendWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const done = (fields: Omit<WebhookResponse, 'durationMs' | 'timedOut'>, timedOut = false): WebhookResponse => ({
    ...fields,
    timedOut,
    durationMs: Math.round(performance.now() - started),
  });
  let checked;
  try {
    checked = await resolveAndCheck(request.policy, request.url, request.lookup);
  } catch (error) {
    if (error instanceof TargetUnresolvedError) return done({ ok: false, status: null, error: error.message });
    throw error;
  }
  if (!checked.allowed)
    return done({ ok: false, status: null, error: `blocked by the target network policy: ${checked.detail}` });
  const url = new URL(request.url);
  const client = url.protocol === 'https:' ? https : http;
  const body = Buffer.from(request.body, 'utf8');
  return new Promise<WebhookResponse>((resolve) => {
    // The timeout's abort ends the request and its answer alike, wherever the exchange is.
    const failed = (error: Error, status: number | null) => {
      const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
      const sentence = timedOut ? `no answer within ${request.timeoutMs} ms` : describeNetworkError(error);
      resolve(done({ ok: false, status: timedOut ? null : status, error: sentence }, timedOut));
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: pinnedLookup(checked),
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': 'Testrun-Webhooks/1',
          ...request.headers,
        },
        signal: AbortSignal.timeout(request.timeoutMs),
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          resolve(done({ ok, status, error: ok ? null : `answered HTTP ${status}` }));
        });
        res.on('error', (error) => failed(error, res.statusCode ?? null));
      },
    );
    req.on('error', (error) => failed(error, null));
    req.end(body);
  });
}

/** A network failure as a short sentence: its code when it has one (ECONNREFUSED …), else its message. */
function describeNetworkError(error: Error): string {
  const code = 'code' in error && typeof error.code === 'string' ? error.code : null;
  return code ? `connection failed (${code})` : errorMessage(error);
}
