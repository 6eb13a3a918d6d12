import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** Keys derived from the one TESTRUN_SECRET, each for one purpose, so none can stand in for another. */
export type DerivedKeys = {
  headers: Buffer;
  view: Buffer;
  /** Signs approval links (docs/VISUAL.md): never the view key, so no view link can stand for one. */
  approval: Buffer;
  idempotency: Buffer;
};

export function deriveKeys(secret: string): DerivedKeys {
  const derive = (info: string) => Buffer.from(hkdfSync('sha256', secret, 'testrun', info, 32));
  return {
    headers: derive('headers-v1'),
    view: derive('view-link-v1'),
    approval: derive('approval-link-v1'),
    idempotency: derive('idempotency-v1'),
  };
}

const SEAL_VERSION = 1;

/**
 * Encrypts a run's headers with AES-256-GCM. The run id is bound as associated data, so a sealed
 * value copied to another run does not open.
 */
export function sealHeaders(key: Buffer, runId: string, headers: Record<string, string>): Buffer {
  return sealText(key, runId, JSON.stringify(headers));
}

export function openHeaders(key: Buffer, runId: string, sealed: Uint8Array): Record<string, string> {
  return parseStringMap(openText(key, runId, sealed));
}

/**
 * Encrypts `plain` with AES-256-GCM, binding `aad` (what the value belongs to) as associated data:
 * a sealed value copied to another owner does not open.
 */
export function sealText(key: Buffer, aad: string, plain: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([SEAL_VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Opens what {@link sealText} sealed for the same `aad`; throws when the key, the owner or the bytes differ. */
export function openText(key: Buffer, aad: string, sealed: Uint8Array): string {
  const buf = Buffer.from(sealed);
  if (buf[0] !== SEAL_VERSION) throw new Error('unknown sealed-value version');
  const decipher = createDecipheriv('aes-256-gcm', key, buf.subarray(1, 13));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(buf.subarray(13, 29));
  return Buffer.concat([decipher.update(buf.subarray(29)), decipher.final()]).toString('utf8');
}

/** A JSON object of strings, or an error: what sealed maps hold. */
export function parseStringMap(json: string): Record<string, string> {
  const parsed: unknown = JSON.parse(json);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not a sealed map');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw new Error('not a sealed map');
    out[k] = v;
  }
  return out;
}

export type ViewSubject = 'suite-run' | 'run';

/** The capability token of a view link: 32 url-safe characters (192 bits) of an HMAC of the subject. */
export function signViewToken(key: Buffer, subject: ViewSubject, id: string): string {
  return createHmac('sha256', key).update(`${subject}:${id}`).digest('base64url').slice(0, 32);
}

export function verifyViewToken(key: Buffer, subject: ViewSubject, id: string, token: string): boolean {
  const expected = Buffer.from(signViewToken(key, subject, id));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function hmacHex(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value).digest('hex');
}
