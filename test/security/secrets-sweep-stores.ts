import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';

/**
 * What the secrets sweep reads and how it searches: every row of every table, every key and value
 * under the test file's Redis prefix, every stored artifact (traces unzipped), and every spelling
 * of a value a browser or a server writes.
 */

/** Every row of every table, as text. */
export async function dumpTables(): Promise<string> {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    const parts: string[] = [];
    for (const { table_name: table } of rows) {
      const dump = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`);
      parts.push(`${table}\n${dump.rows.map((r) => r.row).join('\n')}`);
    }
    return parts.join('\n');
  } finally {
    await client.end();
  }
}

/** Every key and value under this test file's Redis prefix, and the BullMQ job payloads among them. */
export async function dumpRedis(): Promise<{ all: string; jobs: string; keys: number }> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  try {
    const prefix = process.env.REDIS_PREFIX ?? '';
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const all: string[] = [];
    const jobs: string[] = [];
    for (const k of keys) {
      const type = await redis.type(k);
      let value: unknown;
      if (type === 'string') value = await redis.get(k);
      else if (type === 'hash') value = await redis.hgetall(k);
      else if (type === 'list') value = await redis.lrange(k, 0, -1);
      else if (type === 'set') value = await redis.smembers(k);
      else if (type === 'zset') value = await redis.zrange(k, '0', '-1');
      else if (type === 'stream') value = await redis.xrange(k, '-', '+');
      const line = `${k} ${JSON.stringify(value)}`;
      all.push(line);
      if (type === 'hash' && value !== null && typeof value === 'object' && 'data' in value) jobs.push(line);
    }
    return { all: all.join('\n'), jobs: jobs.join('\n'), keys: keys.length };
  } finally {
    redis.disconnect();
  }
}

/** Every entry of every stored trace, unzipped, and every other stored artifact file, as bytes. */
export function storedArtifacts(): { traces: Buffer[]; files: Buffer[] } {
  const root = process.env.ARTIFACTS_DIR ?? '';
  const traces: Buffer[] = [];
  const files: Buffer[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else if (name.endsWith('.zip')) {
        const entries = execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean);
        for (const entry of entries)
          traces.push(execFileSync('unzip', ['-p', file, entry], { maxBuffer: 256 * 1024 * 1024 }));
      } else files.push(readFileSync(file));
    }
  };
  walk(root);
  return { traces, files };
}

/** Values this long are masked inside other text, so their base64 is masked (and searched for) too. */
const SUBSTRING_MIN_LENGTH = 4;

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());

/**
 * Every spelling of `value` that a browser or a server writes: as it is, JSON-escaped, HTML-escaped,
 * `encodeURIComponent`, form encoding (`+` for a space, `!'()~` percent-encoded), `encodeURI`, the
 * URL parser's path and query (`%20` for a space, `@` and `!` kept), percent-encoding in lower-case
 * hex; and, for a value of 4 characters or more, its base64, standard and url-safe, padded or not.
 */
export function spellings(value: string): string[] {
  const form = new URLSearchParams({ v: value }).toString().slice(2);
  const url = new URL(`http://127.0.0.1/${value.replace(/[?#]/g, encodeURIComponent)}?${value.replace(/#/g, '%23')}`);
  const out = [
    value,
    JSON.stringify(value).slice(1, -1),
    value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
    encodeURIComponent(value),
    lowerHex(encodeURIComponent(value)),
    form,
    lowerHex(form),
    encodeURI(value),
    url.pathname.slice(1),
    url.search.slice(1),
  ];
  if (value.length >= SUBSTRING_MIN_LENGTH) {
    const base64 = Buffer.from(value).toString('base64');
    const base64url = Buffer.from(value).toString('base64url');
    out.push(base64, base64.replace(/=+$/, ''), base64url);
  }
  return [...new Set(out)];
}

/** Bytes of images and other binary entries: searched only for values long enough not to occur by chance. */
const BINARY_SEARCH_MIN_BYTES = 6;

function isText(buffer: Buffer): boolean {
  if (buffer.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buffer);
    return true;
  } catch {
    return false;
  }
}

/**
 * Every text is searched for every spelling. A 2-byte value occurs by chance about every 64 KiB of
 * compressed image data, and a page that paints a secret shows it in its pixels, not its bytes: a
 * binary file is searched for the spellings of 6 bytes or more only.
 */
export function searchable(buffer: Buffer, spelling: string): boolean {
  return Buffer.byteLength(spelling) >= BINARY_SEARCH_MIN_BYTES || isText(buffer);
}
