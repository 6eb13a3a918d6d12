// A sandbox's scratch directory (its /work, on the host): a tmpfs of its quota, made before the
// sandbox starts and removed after it.
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS, mountScratch, unmountScratch } from '../../../sandbox';
import type { Isolation } from './sandboxed-cli';

/**
 * The scratch directory names of a Playwright run and of a batch: short, because without the sandbox
 * (PLAYWRIGHT_SANDBOX=off) Chromium's singleton socket goes under the scratch directory's `tmp`, and a
 * Unix socket's path holds at most 107 bytes (`<worker scratch>/<name>/tmp/org.chromium.Chromium.XXXXXX/SingletonSocket`).
 */
export const SCRATCH_PREFIX = { run: 'pwr-', batch: 'pwb-' } as const;

/**
 * Runs `use` with a fresh scratch directory under `parent`: a tmpfs of `bytes` (the sandbox's disk
 * quota: a test that writes gigabytes fills it, not the worker's disk), unmounted and removed after,
 * whatever `use` did. `bytes` null: a plain directory (no sandbox, PLAYWRIGHT_SANDBOX=off).
 */
export async function withScratch<T>(
  parent: string,
  prefix: string,
  use: (dir: string) => Promise<T>,
  bytes: number | null = DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.scratchBytes,
): Promise<T> {
  const dir = await mkdtemp(path.join(parent, prefix));
  if (bytes === null) {
    try {
      return await use(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  try {
    await mountScratch(dir, bytes);
    try {
      return await use(dir);
    } finally {
      await unmountScratch(dir);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The scratch quota of a sandbox of `workers` Playwright workers (each its own); none without a sandbox (PLAYWRIGHT_SANDBOX=off). */
export function scratchBytes(playwright: { isolation: Isolation }, workers = 1): number | null {
  return playwright.isolation === 'none' ? null : DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS.scratchBytes * workers;
}
