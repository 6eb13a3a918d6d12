/**
 * What the benchmark scenarios share: order statistics, the machine description, checked JSON
 * bodies, and docs/BENCHMARKS.md, where each scenario owns one section between markers.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Validation } from '@testrun/contracts';

export const BENCHMARKS_FILE = path.resolve(__dirname, '../docs/BENCHMARKS.md');

const PREAMBLE = `# Benchmarks

Written by \`pnpm bench [scenario]\` (\`bench/run.ts\`): each scenario measures on this machine and
rewrites its own section below; run it again to refresh its figures. Tests never assert timings;
this file is where performance is measured.
`;

/** Nearest-rank percentile (p in 0..100) of a non-empty sample. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const value = sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  if (value === undefined) throw new Error('percentile of an empty sample');
  return value;
}

/**
 * Median, smallest and largest of a non-empty sample. The median of an even count is the mean of
 * the two middle values (the nearest-rank median would report the smaller: the best of two trials).
 */
export function spread(values: readonly number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  // The middle value twice for an odd count; the two middle values for an even one.
  const lower = sorted[Math.ceil(sorted.length / 2) - 1];
  const upper = sorted[Math.floor(sorted.length / 2)];
  if (lower === undefined || upper === undefined) throw new Error('spread of an empty sample');
  return { median: (lower + upper) / 2, min: sorted[0] ?? lower, max: sorted.at(-1) ?? upper };
}

/** The first element of `items`, or an error naming what was expected. */
export function first<T>(items: readonly T[], what: string): T {
  const item = items[0];
  if (item === undefined) throw new Error(`expected at least one ${what}`);
  return item;
}

/** One line describing this machine, for the Machine paragraph of a section. */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model ?? 'unknown CPU';
  return `${cpus.length} × ${model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/** The JSON body of `res`, checked by a contracts validator; throws with the body when it does not match. */
export async function jsonBody<T>(res: Response, validate: (value: unknown) => Validation<T>): Promise<T> {
  const body: unknown = await res.json();
  const result = validate(body);
  if (!result.ok) throw new Error(`${res.url} answered ${res.status} with an unexpected body: ${JSON.stringify(body)}`);
  return result.value;
}

/**
 * Replaces the section `name` of docs/BENCHMARKS.md, or of `file` (between `<!-- bench:name -->` and
 * `<!-- /bench:name -->`) with `markdown`, or appends it; other sections stay as they are.
 */
export function writeSection(name: string, markdown: string, file = BENCHMARKS_FILE): void {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const block = `${open}\n${markdown.trim()}\n${close}`;
  const current = existsSync(file) ? readFileSync(file, 'utf8') : PREAMBLE;
  const start = current.indexOf(open);
  const end = current.indexOf(close);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${block}${current.slice(end + close.length)}`
      : `${current.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, next);
}
