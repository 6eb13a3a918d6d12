import { createHmac } from 'node:crypto';
import { deriveKeys, signViewToken } from './secrets/seal';
import { checkViewLink, signViewLink, viewLinkExpiry, viewLinkTerms } from './view-links';

const key = deriveKeys('k'.repeat(40)).view;
const now = new Date('2026-11-22T12:00:00Z');
const createdAt = new Date('2026-11-20T12:00:00Z');
const DAY = 86_400_000;
const state = { createdAt, version: 0 };

/** A token of the form handed out before links carried their start: `<expiry>.<mac>`. */
function expiringToken(subject: string, id: string, expiresAt: Date, version: number): string {
  const sec = Math.floor(expiresAt.getTime() / 1000);
  const mac = createHmac('sha256', key).update(`${subject}:${id}:${sec}:${version}`).digest('base64url').slice(0, 32);
  return `${sec.toString(36)}.${mac}`;
}

describe('view links', () => {
  const terms = viewLinkTerms(state);

  it('last TTL days from their subject creation, the TTL being the one they are checked with', () => {
    expect(terms.issuedAt).toEqual(createdAt);
    const token = signViewLink(key, 'suite-run', 'srun_1', terms);
    expect(token).toMatch(/^[0-9a-z]+~[A-Za-z0-9_-]{32}$/);
    expect(checkViewLink(key, 'suite-run', 'srun_1', token, state, 30, now)).toEqual(terms);
    // Past TTL days, or with the start moved, or for another subject: refused.
    const later = new Date(createdAt.getTime() + 30 * DAY + 1_000);
    expect(checkViewLink(key, 'suite-run', 'srun_1', token, state, 30, later)).toBeNull();
    const [, macPart] = token.split('~');
    const moved = `${Math.floor(later.getTime() / 1000).toString(36)}~${macPart ?? ''}`;
    expect(checkViewLink(key, 'suite-run', 'srun_1', moved, state, 30, later)).toBeNull();
    expect(checkViewLink(key, 'run', 'srun_1', token, state, 30, now)).toBeNull();
    // A lower TTL shortens the link handed out under the higher one.
    expect(checkViewLink(key, 'suite-run', 'srun_1', token, state, 1, now)).toBeNull();
  });

  it('are revoked by a new version', () => {
    const token = signViewLink(key, 'run', 'run_1', terms);
    expect(checkViewLink(key, 'run', 'run_1', token, { createdAt, version: 1 }, 30, now)).toBeNull();
    const fresh = signViewLink(key, 'run', 'run_1', viewLinkTerms({ createdAt, version: 1 }));
    expect(checkViewLink(key, 'run', 'run_1', fresh, { createdAt, version: 1 }, 30, now)).not.toBeNull();
  });

  it('that carry their expiry work until it and until their subject is TTL days old', () => {
    const expiring = expiringToken('run', 'run_1', viewLinkExpiry(30, createdAt), 0);
    expect(checkViewLink(key, 'run', 'run_1', expiring, state, 30, now)).toEqual(terms);
    expect(checkViewLink(key, 'run', 'run_1', expiring, state, 1, now)).toBeNull();
    expect(checkViewLink(key, 'run', 'run_1', expiring, { createdAt, version: 1 }, 30, now)).toBeNull();
    // Its expiry is never read as a start, nor a start as an expiry.
    expect(checkViewLink(key, 'run', 'run_1', expiring.replace('.', '~'), state, 30, now)).toBeNull();
    const token = signViewLink(key, 'run', 'run_1', terms);
    expect(checkViewLink(key, 'run', 'run_1', token.replace('~', '.'), state, 30, now)).toBeNull();
  });

  it('of the older form (no expiry) work until their subject is TTL days old, unless revoked', () => {
    const legacy = signViewToken(key, 'suite-run', 'srun_1');
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, state, 30, now)).toEqual(terms);
    const old = viewLinkExpiry(-31, now);
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, { createdAt: old, version: 0 }, 30, now)).toBeNull();
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, { createdAt, version: 1 }, 30, now)).toBeNull();
  });
});
