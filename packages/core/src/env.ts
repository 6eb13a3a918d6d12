import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { S3ArtifactStoreOptions } from './artifact-store/s3';

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

/** Which artifact store a process uses, read once at start (docs/ARTIFACTS.md). */
export type ArtifactStoreConfig = { kind: 'local'; dir: string } | ({ kind: 's3' } & S3ArtifactStoreOptions);

/** S3's rule for bucket names (3–63 lower-case letters, digits, dots and hyphens). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A key prefix: plain path segments, as artifact keys are. */
const PREFIX = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/**
 * ARTIFACTS_URL selects the store: `s3://bucket/prefix` for an S3-compatible object store, or
 * `file:///absolute/path` for a local directory; it wins over ARTIFACTS_DIR. Unset, ARTIFACTS_DIR (or
 * `defaultDir`) is the local directory, as before. For S3: AWS_REGION (any value when an endpoint is given; default us-east-1
 * then), AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, ARTIFACTS_S3_FORCE_PATH_STYLE (default false).
 * Credentials are not read here: the SDK's default chain finds them (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, AWS_PROFILE, web identity, an instance or pod role), so none is ever part
 * of a config object that could be logged.
 */
export function readArtifactStoreConfig(env: Env, defaultDir: string): ArtifactStoreConfig {
  const raw = env.ARTIFACTS_URL;
  if (raw === undefined || raw === '')
    return { kind: 'local', dir: path.resolve(env.ARTIFACTS_DIR ? env.ARTIFACTS_DIR : defaultDir) };
  const url = new URL(readUrl(env, 'ARTIFACTS_URL', undefined, ['s3:', 'file:']));
  if (url.username || url.password || url.search || url.hash)
    throw new ConfigError(
      'ARTIFACTS_URL must be s3://bucket/prefix or file:///path, with no credentials, query or fragment',
    );
  if (url.protocol === 'file:') {
    if (url.host) throw new ConfigError('ARTIFACTS_URL=file:// takes an absolute path and no host (file:///path)');
    return { kind: 'local', dir: fileURLToPath(url) };
  }
  const bucket = url.hostname;
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..'))
    throw new ConfigError(`ARTIFACTS_URL names the bucket "${bucket}", which is not a valid S3 bucket name`);
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && (!PREFIX.test(prefix) || prefix.split('/').some((s) => s === '.' || s === '..')))
    throw new ConfigError(`ARTIFACTS_URL's prefix "${prefix}" may hold only letters, digits, '_', '-', '.' and '/'`);
  const endpointName = env.AWS_ENDPOINT_URL_S3 ? 'AWS_ENDPOINT_URL_S3' : 'AWS_ENDPOINT_URL';
  const endpoint = env[endpointName] ? readUrl(env, endpointName, undefined, ['http:', 'https:']) : undefined;
  if (endpoint && (new URL(endpoint).username || new URL(endpoint).password))
    throw new ConfigError(
      `${endpointName} must not carry credentials: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`,
    );
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || (endpoint ? 'us-east-1' : undefined);
  if (!region)
    throw new ConfigError('AWS_REGION is required with ARTIFACTS_URL=s3://… on AWS (or set AWS_ENDPOINT_URL_S3)');
  const forcePathStyle = readEnum(env, 'ARTIFACTS_S3_FORCE_PATH_STYLE', ['true', 'false'] as const, 'false') === 'true';
  return { kind: 's3', bucket, prefix, region, endpoint, forcePathStyle };
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
  /** The local store's directory (ARTIFACTS_DIR, or ARTIFACTS_URL=file:///path); unused with an S3 store. */
  artifactsDir: string;
  /** ARTIFACTS_URL and friends: which artifact store, see readArtifactStoreConfig. */
  artifacts: ArtifactStoreConfig;
  publicBaseUrl: string;
  /** VIEW_LINK_TTL_DAYS: how long a link to the detailed view works (default 30 days). */
  viewLinkTtlDays: number;
  /** Prefix of every Redis key of this deployment (queues, rate limits); tests isolate by it. */
  redisPrefix: string;
};

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/testrun';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const DEFAULT_ARTIFACTS_DIR = path.resolve(__dirname, '../../../.testrun/artifacts');

export function readCommonConfig(env: Env = process.env): CommonConfig {
  const port = readInt(env, 'PORT', 3000, { min: 0, max: 65535 });
  const artifacts = readArtifactStoreConfig(env, DEFAULT_ARTIFACTS_DIR);
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
    artifactsDir: artifacts.kind === 'local' ? artifacts.dir : DEFAULT_ARTIFACTS_DIR,
    artifacts,
    publicBaseUrl: readUrl(env, 'PUBLIC_BASE_URL', `http://localhost:${port || 3000}`, ['http:', 'https:']).replace(
      /\/+$/,
      '',
    ),
    viewLinkTtlDays: readInt(env, 'VIEW_LINK_TTL_DAYS', 30, { min: 1, max: 3650 }),
    redisPrefix: readString(env, 'REDIS_PREFIX', 'testrun'),
  };
}
