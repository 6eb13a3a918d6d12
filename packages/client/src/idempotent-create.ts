import { randomUUID } from 'node:crypto';
import type { EnqueueOptions } from './options';
import type { Transport } from './transport';

/** What a creating POST gives: the answer's body, the key that was sent, and whether the answer was a replay. */
export type Created<T> = { body: T; idempotencyKey: string; replayed: boolean };

/**
 * A POST that creates something (runs, a suite run's rerun, a deployment), under the caller's
 * `Idempotency-Key` or a new random one: the transport's retries of it can never create twice, and
 * with a stable key neither can a caller's. The service marks an answer it replays `Idempotent-Replayed: true`.
 */
export async function createIdempotently<T>(
  transport: Transport,
  path: string,
  body: unknown,
  options: EnqueueOptions,
): Promise<Created<T>> {
  const idempotencyKey = options.idempotencyKey ?? randomUUID();
  const res = await transport.request<T>('POST', path, { body, idempotencyKey });
  return { body: res.body, idempotencyKey, replayed: res.headers.get('idempotent-replayed') === 'true' };
}
