import { createHash } from 'node:crypto';
import { preferredWait, readWithWait, type ChangeWatcher, type WaitableRead } from './long-poll';

/** A strong ETag of a JSON body: a hash of its bytes, so equal bodies have equal tags on every replica. */
function jsonETag(body: unknown): string {
  return `"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 32)}"`;
}

/** True when an `If-None-Match` header names `etag` or is `*` (the weak comparison RFC 9110 asks of it). */
function ifNoneMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/** A read of {@link readConditionally}: the long poll's, and which part of the value is the body. */
export interface ConditionalRead<T> extends WaitableRead<T> {
  body: (value: T) => unknown;
}

/** What to answer: the value read, its body's ETag, whether that is the client's (304) and the wait honoured. */
export type ConditionalAnswer<T> = { value: T; etag: string; notModified: boolean; applied: number | null };

/**
 * A GET with `If-None-Match` and `Prefer: wait=N` combined, which is what makes a long poll cheap:
 * - no `If-None-Match`: as {@link readWithWait} (a resource not final is held until it changes);
 * - one that names the current body: 304, but with `wait=N` and the resource not final, only after
 *   it changed (then 200 with the new body) or N seconds passed unchanged (then 304);
 * - one that names another body: 200 with the current body at once, since the client is behind.
 */
export async function readConditionally<T>(
  watcher: ChangeWatcher,
  headers: { prefer: string | undefined; ifNoneMatch: string | undefined },
  signal: AbortSignal,
  target: ConditionalRead<T>,
): Promise<ConditionalAnswer<T>> {
  const answer = (value: T, applied: number | null): ConditionalAnswer<T> => {
    const etag = jsonETag(target.body(value));
    return { value, etag, notModified: ifNoneMatches(headers.ifNoneMatch, etag), applied };
  };
  if (headers.ifNoneMatch === undefined) {
    const { value, applied } = await readWithWait(watcher, headers.prefer, signal, target);
    return answer(value, applied);
  }
  const first = answer(await target.read(), null);
  const wait = preferredWait(headers.prefer);
  if (!first.notModified || wait === null) return first;
  if (wait === 0 || target.isFinal(first.value)) return { ...first, applied: wait };
  const waiting = watcher.wait(target, target.fingerprint(first.value), wait * 1000, signal);
  if (!waiting) return first;
  await waiting;
  return answer(await target.read(), wait);
}
