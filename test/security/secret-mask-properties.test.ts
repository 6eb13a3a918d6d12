import fc from 'fast-check';
import { MASK, SecretMask } from '../../apps/worker/src/run/secret-mask';

// Properties over generated secrets: whatever characters a secret has, every spelling an encoder
// of a browser or a server gives it is masked. Pure: no process is started.

const letters = Array.from('abcXYZ019');
const marks = Array.from(' !"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
const wide = ['é', 'Ъ', 'ю', '€', '😀', '\u00a0'];
const char = fc.constantFrom(...letters, ...marks, ...wide, '\n');
/** Secrets of 4 characters or more: masked wherever they occur. */
const longSecret = fc.string({ unit: char, minLength: 4, maxLength: 24 }).filter((s) => !/^\**$/.test(s));
/** Secrets of 1 to 3 characters: masked where they stand alone (no space, no star, no angle bracket: the separators). */
const shortSecret = fc
  .string({ unit: fc.constantFrom(...letters, ...marks.filter((m) => !' *<>'.includes(m)), ...wide), minLength: 1 })
  .filter((s) => s.length <= 3);

const html = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase());
const form = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);
/**
 * The URL parser drops tabs and newlines (only values without them keep their spelling in a URL),
 * and spaces at the end of the URL: the value is followed by more.
 */
const inUrl = (s: string) => {
  const url = new URL(`http://127.0.0.1/p?q=${s.replace(/[#&]/g, encodeURIComponent)}&END#${s}END`);
  return [url.search.slice(3, -4), url.hash.slice(1, -3)];
};
const asciiJson = (s: string) =>
  JSON.stringify(s)
    .slice(1, -1)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** Every spelling of `s` that percent-encoding, form encoding, the URL parser, JSON and HTML give. */
function textSpellings(s: string): string[] {
  const out = [s, JSON.stringify(s).slice(1, -1), asciiJson(s), encodeURIComponent(s), encodeURI(s), html(s), form(s)];
  out.push(lowerHex(encodeURIComponent(s)), lowerHex(form(s)));
  if (!/[\n\t]/.test(s)) out.push(...inUrl(s));
  return out;
}

function base64Spellings(s: string): string[] {
  const std = Buffer.from(s).toString('base64');
  const url = Buffer.from(s).toString('base64url');
  return [std, std.replace(/=+$/, ''), url, encodeURIComponent(std), form(std)];
}

const SEPARATOR = '\u0002';

test('a secret of 4 characters or more is masked in every spelling', () => {
  fc.assert(
    fc.property(longSecret, (secret) => {
      const mask = new SecretMask([secret]);
      for (const spelling of [...textSpellings(secret), ...base64Spellings(secret)]) {
        const masked = mask.text(`before${SEPARATOR}${spelling}${SEPARATOR}after`);
        expect(masked).not.toContain(spelling);
        expect(masked).toContain(MASK);
      }
    }),
    { numRuns: 300 },
  );
});

test('a secret of 8 bytes or more is masked inside a longer base64 string, at every alignment', () => {
  fc.assert(
    fc.property(
      longSecret.filter((s) => Buffer.byteLength(s) >= 8),
      fc.string({ maxLength: 5 }),
      fc.string({ maxLength: 5 }),
      (secret, before, after) => {
        const whole = Buffer.from(`${before}${secret}${after}`).toString('base64');
        expect(new SecretMask([secret]).text(whole)).toContain(MASK);
      },
    ),
    { numRuns: 300 },
  );
});

test('a secret of 1 to 3 characters is masked in every spelling where it stands alone', () => {
  fc.assert(
    fc.property(shortSecret, (secret) => {
      const mask = new SecretMask([secret]);
      for (const spelling of textSpellings(secret))
        expect(mask.text(`before <${spelling}> after`)).toBe(`before <${MASK}> after`);
    }),
    { numRuns: 300 },
  );
});

test('the credential of a Bearer or Basic value is masked where a page echoes it alone', () => {
  fc.assert(
    fc.property(
      longSecret.filter((s) => !/[\s:]/.test(s)),
      longSecret,
      (token, password) => {
        const user = 'user-of-test';
        const basic = Buffer.from(`${user}:${password}`).toString('base64');
        const mask = new SecretMask([`Bearer ${token}`, `Basic ${basic}`]);
        expect(mask.text(`invalid token ${token}`)).toBe(`invalid token ${MASK}`);
        expect(mask.text(`bad ${basic}`)).toBe(`bad ${MASK}`);
        expect(mask.text(`password${SEPARATOR}${password}${SEPARATOR}`)).toBe(
          `password${SEPARATOR}${MASK}${SEPARATOR}`,
        );
      },
    ),
    { numRuns: 200 },
  );
});
