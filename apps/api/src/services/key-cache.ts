import { KEY_CACHE_TTL_MS } from '@testrun/core/api-keys';
import type { AuthContext } from './auth';

/** An accepted key as this replica last read it from Postgres. */
export type CachedKey = {
  auth: AuthContext;
  /** The authentication epoch read before the key was: a different epoch means "read it again". */
  epoch: string;
  /** When it was read (ms since the epoch); past {@link KEY_CACHE_TTL_MS} it is read again anyway. */
  readAt: number;
  /** When last_used_at was last written (or read), to write it at most once a minute. */
  lastUsedAt: number | null;
};

/**
 * Accepted keys by hash, in memory, at most `maxEntries` (the oldest read goes first). Refused and
 * unknown keys are never kept, so guessing cannot fill it; an entry is only used while the epoch in
 * Redis is the one it was read at, which is what makes a revocation immediate on every replica.
 */
export class KeyCache {
  readonly #entries = new Map<string, CachedKey>();

  constructor(private readonly maxEntries = 10_000) {}

  /** The entry of `hash` unless it is older than {@link KEY_CACHE_TTL_MS}. */
  get(hash: string, now: number): CachedKey | undefined {
    const entry = this.#entries.get(hash);
    if (entry && now - entry.readAt >= KEY_CACHE_TTL_MS) {
      this.#entries.delete(hash);
      return undefined;
    }
    return entry;
  }

  set(hash: string, entry: CachedKey): void {
    this.#entries.delete(hash);
    this.#entries.set(hash, entry);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(hash: string): void {
    this.#entries.delete(hash);
  }
}
