/**
 * The ways a secret value may be written where a run's output would show it, as regular-expression
 * source: its characters as they are and as every encoder a browser or a server applies writes
 * them (percent-encoding in either hex case, a form's `+` for a space, JSON and HTML escapes), its
 * base64, and the credential inside an `Authorization`-style value.
 */

/**
 * A spelled value; the length of its plain spelling (longer ones go first in an alternation); and
 * its anchor, the longest run of {@link PLAIN} characters of the plain spelling: no encoder
 * rewrites those, so every spelling contains the anchor as it is, and a text without it needs no
 * scan (a long anchor is found fastest: a string search skips ahead by its length).
 */
export type Spelling = { pattern: string; length: number; anchor: string };

/** The base64 of a value found inside a longer base64 string is masked from this many characters on. */
const EMBEDDED_BASE64_MIN_LENGTH = 8;

/**
 * Characters no encoder rewrites: letters, digits and `-._` (unreserved in URLs: left alone by
 * `encodeURIComponent`, form encoding, and the percent-encoders of PHP, Python, Java and Go).
 */
const PLAIN = /^[A-Za-z0-9._-]$/;

/** JSON's two-character escapes (`\/` is optional in JSON, and some serializers write it). */
const JSON_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

const HTML_ENTITIES: Record<string, string[]> = {
  '&': ['&amp;'],
  '<': ['&lt;'],
  '>': ['&gt;'],
  '"': ['&quot;'],
  "'": ['&apos;'],
};

/**
 * One character in every spelling: itself; `+` for a space (form encoding); its UTF-8 bytes
 * percent-encoded (`encodeURIComponent`, `encodeURI`, the URL parser's sets and form encoding all
 * produce a subset of these, in either hex case); its JSON escapes (`\"`, `\u00e9`); its HTML
 * entities (named, decimal, hex). {@link PLAIN} characters are left alone by every encoder.
 */
function charPattern(char: string): string {
  if (PLAIN.test(char)) return escapeRegExp(char);
  // Escapes first, the character itself last: `\\` in JSON is one backslash, not two.
  const alternatives: string[] = [];
  if (char === ' ') alternatives.push('\\+');
  alternatives.push([...Buffer.from(char, 'utf8')].map((byte) => `%${hexPattern(byte, 2)}`).join(''));
  const json = JSON_ESCAPES[char];
  if (json) alternatives.push(escapeRegExp(json));
  let units = '';
  for (let i = 0; i < char.length; i++) units += `\\\\u${hexPattern(char.charCodeAt(i), 4)}`;
  alternatives.push(units);
  for (const entity of HTML_ENTITIES[char] ?? []) alternatives.push(entity);
  const code = char.codePointAt(0) ?? 0;
  alternatives.push(`&#0*${code};`, `&#[xX]0*${hexPattern(code, 1)};`, escapeRegExp(char));
  return `(?:${alternatives.join('|')})`;
}

/** Every spelling of `text`, character by character (also a mixture, as a URL of JSON gives). */
function spelled(text: string): string {
  let out = '';
  for (const char of text) out += charPattern(char);
  return out;
}

/** The characters of `text`, each as a pattern of its spellings. */
export function spelledChars(text: string): string[] {
  return Array.from(text).map(charPattern);
}

/**
 * A value's spellings for masking wherever it occurs: the value itself (in every encoding, see
 * {@link charPattern}), its base64 (standard and url-safe, padded or not, itself percent-encoded
 * or not), and the part of its base64 fixed by the value alone wherever it starts inside a longer
 * base64 string (three alignments), when that part is long enough not to occur by chance.
 */
export function valueSpellings(value: string): Spelling[] {
  const out: Spelling[] = [spelling(value)];
  const padding = `(?:${charPattern('=')}){0,2}`;
  const bytes = Buffer.from(value, 'utf8');
  const full = bytes.toString('base64').replace(/=+$/, '');
  const forms = new Set([full, toUrlSafe(full)]);
  for (const form of forms) out.push({ ...spelling(form), pattern: `${spelled(form)}${padding}` });
  const cores = new Set<string>();
  for (const shift of [0, 1, 2]) {
    const core = embeddedBase64(bytes, shift);
    if (core.length < EMBEDDED_BASE64_MIN_LENGTH || forms.has(core)) continue;
    cores.add(core);
    cores.add(toUrlSafe(core));
  }
  for (const core of cores) out.push(spelling(core));
  return out;
}

/** `text` in every spelling, with its length and anchor. */
export function spelling(text: string): Spelling {
  const runs = text.match(/[A-Za-z0-9._-]+/g) ?? [];
  const anchor = runs.reduce((longest, run) => (run.length > longest.length ? run : longest), '');
  return { pattern: spelled(text), length: text.length, anchor };
}

/**
 * The base64 characters that only `bytes` decide when they start `shift` bytes into a longer
 * string: each base64 character holds 6 bits, so the ones overlapping a neighbouring byte differ.
 */
function embeddedBase64(bytes: Buffer, shift: number): string {
  const encoded = Buffer.concat([Buffer.alloc(shift), bytes, Buffer.alloc(2)]).toString('base64');
  const first = Math.ceil((8 * shift) / 6);
  const end = Math.floor((8 * (shift + bytes.length)) / 6);
  return encoded.slice(first, end);
}

function toUrlSafe(base64: string): string {
  return base64.replace(/\+/g, '-').replace(/\//g, '_');
}

/** `Bearer`, `Basic` and `token` credentials of an `Authorization`-style value. */
const CREDENTIAL = /^\s*(bearer|basic|token)\s+(\S+)\s*$/i;

/**
 * The secrets inside a value such as `Bearer TOKEN`: the credential, which a server echoes on its
 * own ("invalid token TOKEN"), and for `Basic` its decoded `user:password` and the password (the
 * user name when the password is empty, as keys passed as the user are). A user name beside a
 * password is an identity, not a secret, and is often a common word. Empty for any other value.
 */
export function credentialParts(value: string): string[] {
  const match = CREDENTIAL.exec(value);
  if (!match) return [];
  const [, scheme = '', credential = ''] = match;
  if (scheme.toLowerCase() !== 'basic') return [credential];
  return [credential, ...basicParts(credential)];
}

function basicParts(credential: string): string[] {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credential)) return [];
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(credential, 'base64'));
  } catch {
    return [];
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) return [decoded];
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  return [decoded, password.length > 0 ? password : user].filter((part) => part.length > 0);
}

/** `n` in hex of at least `digits` digits, each letter in either case. */
function hexPattern(n: number, digits: number): string {
  return Array.from(n.toString(16).padStart(digits, '0'))
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('');
}

function escapeRegExp(text: string): string {
  // Syntax characters only: the `u` flag refuses any other escaped character.
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
