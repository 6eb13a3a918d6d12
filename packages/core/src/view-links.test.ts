import { deriveKeys, signViewToken } from './secrets';
import { checkViewLink, signViewLink, viewLinkExpiry, viewLinkTerms } from './view-links';

const key = deriveKeys('k'.repeat(40)).view;
const now = new Date('2026-11-22T12:00:00Z');
const createdAt = new Date('2026-11-20T12:00:00Z');
const DAY = 86_400_000;

describe('view links', () => {
  const terms = viewLinkTerms({ createdAt, version: 0 }, 30);

  it('expire TTL days after their subject was created, and the token signs that', () => {
    expect(terms.expiresAt).toEqual(new Date(createdAt.getTime() + 30 * DAY));
    const token = signViewLink(key, 'suite-run', 'srun_1', terms);
    expect(token).toMatch(/^[0-9a-z]+\.[A-Za-z0-9_-]{32}$/);
    expect(checkViewLink(key, 'suite-run', 'srun_1', token, { createdAt, version: 0 }, 30, now)).toEqual(terms);
    // Past the expiry, or with the expiry changed, or for another subject: refused.
    const later = new Date(terms.expiresAt.getTime() + 1_000);
    expect(checkViewLink(key, 'suite-run', 'srun_1', token, { createdAt, version: 0 }, 30, later)).toBeNull();
    const [, macPart] = token.split('.');
    const extended = `${Math.floor(later.getTime() / 1000 + 86_400).toString(36)}.${macPart ?? ''}`;
    expect(checkViewLink(key, 'suite-run', 'srun_1', extended, { createdAt, version: 0 }, 30, later)).toBeNull();
    expect(checkViewLink(key, 'run', 'srun_1', token, { createdAt, version: 0 }, 30, now)).toBeNull();
  });

  it('are revoked by a new version', () => {
    const token = signViewLink(key, 'run', 'run_1', terms);
    expect(checkViewLink(key, 'run', 'run_1', token, { createdAt, version: 1 }, 30, now)).toBeNull();
    const fresh = signViewLink(key, 'run', 'run_1', viewLinkTerms({ createdAt, version: 1 }, 30));
    expect(checkViewLink(key, 'run', 'run_1', fresh, { createdAt, version: 1 }, 30, now)).not.toBeNull();
  });

  it('of the older form (no expiry) work until their subject is TTL days old, unless revoked', () => {
    const legacy = signViewToken(key, 'suite-run', 'srun_1');
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, { createdAt, version: 0 }, 30, now)).toEqual(terms);
    const old = viewLinkExpiry(-31, now);
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, { createdAt: old, version: 0 }, 30, now)).toBeNull();
    expect(checkViewLink(key, 'suite-run', 'srun_1', legacy, { createdAt, version: 1 }, 30, now)).toBeNull();
  });
});
