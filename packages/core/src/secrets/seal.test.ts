import { generateApiKey, isWellFormedApiKey } from '../api-keys';
import { deriveKeys, openHeaders, sealHeaders, signViewToken, verifyViewToken } from './seal';

const keys = deriveKeys('a-secret-that-is-long-enough-for-tests-0123');

describe('sealed headers', () => {
  it('opens only for the run it was sealed for', () => {
    const sealed = sealHeaders(keys.headers, 'run_a', { Authorization: 'Basic ZGVtbzpwcmV2aWV3' });
    expect(sealed.includes(Buffer.from('Basic'))).toBe(false);
    expect(openHeaders(keys.headers, 'run_a', sealed)).toEqual({ Authorization: 'Basic ZGVtbzpwcmV2aWV3' });
    expect(() => openHeaders(keys.headers, 'run_b', sealed)).toThrow();
    expect(() => openHeaders(deriveKeys('another-secret-that-is-long-enough-0123').headers, 'run_a', sealed)).toThrow();
  });
});

describe('view tokens', () => {
  it('verify for their subject only', () => {
    const token = signViewToken(keys.view, 'suite-run', 'srun_1');
    expect(token).toHaveLength(32);
    expect(verifyViewToken(keys.view, 'suite-run', 'srun_1', token)).toBe(true);
    expect(verifyViewToken(keys.view, 'run', 'srun_1', token)).toBe(false);
    expect(verifyViewToken(keys.view, 'suite-run', 'srun_2', token)).toBe(false);
    expect(verifyViewToken(keys.view, 'suite-run', 'srun_1', token.slice(0, 31))).toBe(false);
  });
});

describe('api keys', () => {
  it('carry a checksum that catches a changed character', () => {
    const { key, hash } = generateApiKey();
    expect(key).toMatch(/^trk_[0-9A-Za-z]{38}$/);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
    const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    expect(isWellFormedApiKey(flipped)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey('Bearer')).toBe(false);
  });
});
