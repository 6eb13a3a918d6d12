import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * A new id: `prefix_` + 10 characters of millisecond time + 16 random characters (80 bits).
 * Time first keeps ids sortable by creation, so new rows land at the end of their indexes.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  let rand = '';
  for (const byte of randomBytes(16)) rand += ALPHABET.charAt(byte % 32);
  return `${prefix}_${time}${rand}`;
}

export const ID_PREFIX = {
  workspace: 'ws',
  user: 'usr',
  apiKey: 'key',
  project: 'prj',
  suite: 'ste',
  test: 'tst',
  suiteRun: 'srun',
  run: 'run',
  step: 'stp',
  artifact: 'art',
  secretVariable: 'sec',
  pageEvent: 'pev',
  webhookEndpoint: 'whe',
  deployment: 'dep',
  setupResult: 'setup',
  baseline: 'bl',
  baselineHistory: 'blh',
  visualChange: 'vis',
} as const;
