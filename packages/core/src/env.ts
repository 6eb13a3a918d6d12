import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Raised at start when a variable is missing or malformed; the message names it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

export function readString(env: Env, name: string, fallback?: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`${name} is required but not set`);
  }
  return value;
}

export function readInt(
  env: Env,
  name: string,
  fallback: number,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function readUrl(env: Env, name: string, fallback: string | undefined, protocols: string[]): string {
  const value = readString(env, name, fallback);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${value}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(
      `${name} must be a ${protocols.map((p) => p.replace(':', '')).join(' or ')} URL, got "${url.protocol}"`,
    );
  }
  return value;
}

export function readEnum<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = env[name] ?? fallback;
  if (!(values as readonly string[]).includes(value))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${value}"`);
  return value as T;
}

/** Where a development secret is kept so that an API and a worker on one machine agree. */
export const LOCAL_SECRET_FILE = path.resolve(__dirname, '../../../.testrun/secret');

/**
 * TESTRUN_SECRET: required in production. Elsewhere, generated once and kept in `.testrun/secret`.
 */
export function readSecret(env: Env, file = LOCAL_SECRET_FILE): string {
  const value = env.TESTRUN_SECRET;
  if (value) {
    if (value.length < 32) throw new ConfigError('TESTRUN_SECRET must be at least 32 characters');
    return value;
  }
  if (env.NODE_ENV === 'production') throw new ConfigError('TESTRUN_SECRET is required when NODE_ENV=production');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(path.dirname(file), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, secret, { flag: 'wx', mode: 0o600 });
  } catch {
    // Another process wrote it first: use theirs.
  }
  return readFileSync(file, 'utf8').trim();
}

/** The settings both apps share, read once. */
export type CommonConfig = {
  databaseUrl: string;
  redisUrl: string;
  secret: string;
  logLevel: string;
  artifactsDir: string;
  publicBaseUrl: string;
  /** VIEW_LINK_TTL_DAYS: how long a link to the detailed view works (default 30 days). */
  viewLinkTtlDays: number;
  /** Prefix of every Redis key of this deployment (queues, rate limits); tests isolate by it. */
  redisPrefix: string;
};

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/testrun';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function readCommonConfig(env: Env = process.env): CommonConfig {
  const port = readInt(env, 'PORT', 3000, { min: 0, max: 65535 });
  return {
    databaseUrl: readUrl(env, 'DATABASE_URL', DEFAULT_DATABASE_URL, ['postgresql:', 'postgres:']),
    redisUrl: readUrl(env, 'REDIS_URL', DEFAULT_REDIS_URL, ['redis:', 'rediss:']),
    secret: readSecret(env),
    logLevel: readEnum(
      env,
      'LOG_LEVEL',
      ['error', 'warn', 'info', 'http', 'verbose', 'debug', 'silly'] as const,
      'info',
    ),
    artifactsDir: path.resolve(
      readString(env, 'ARTIFACTS_DIR', path.resolve(__dirname, '../../../.testrun/artifacts')),
    ),
    publicBaseUrl: readUrl(env, 'PUBLIC_BASE_URL', `http://localhost:${port || 3000}`, ['http:', 'https:']).replace(
      /\/+$/,
      '',
    ),
    viewLinkTtlDays: readInt(env, 'VIEW_LINK_TTL_DAYS', 30, { min: 1, max: 3650 }),
    redisPrefix: readString(env, 'REDIS_PREFIX', 'testrun'),
  };
}
