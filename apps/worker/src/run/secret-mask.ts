import { AnchorFilter } from './secret-anchors';
import { credentialParts, spelling, spelledChars, valueSpellings, type Spelling } from './secret-spellings';

/** What replaces a secret value wherever a run's output would show it. */
export const MASK = '****';

const ELLIPSIS = '…';

/** Anchors shorter than this would let most texts through the filter (and {@link AnchorFilter} needs 4). */
const ANCHOR_MIN_LENGTH = 4;

/** Values this long or longer are masked wherever they occur, inside other text too. */
const SUBSTRING_MIN_LENGTH = 4;

/** What may stand between a cut value and the ellipsis: the start of an escape the cut split. */
const PARTIAL_ESCAPE = '(?:%[0-9A-Fa-f]?|&#?[0-9A-Za-z]*|\\\\(?:u[0-9A-Fa-f]{0,3})?)?';

/**
 * Masks the secret values a run uses (its header values and the secret variables its steps
 * reference) in any text the run writes: step rows, summaries, messages, logs and the trace.
 *
 * A value of 4 or more characters is replaced wherever it occurs, in every spelling a browser or a
 * server gives it (see {@link valueSpellings}): JSON- and HTML-escaped, percent-encoded as a URL or
 * a form writes it (`p%40ss+w0rd%21x`, `p@ss%20w0rd!x`), and in base64. A value of 1 to 3
 * characters is replaced only where it stands on its own, not inside a longer word or number:
 * `pin 42` becomes `pin ****` for the secret `42`, while `1421` and `answer` stay readable. Masking
 * every substring would turn all text to stars for a one-letter secret; a value that short is weak
 * anyway, and this keeps it out of every place it appears as itself (a field's value, an echoed
 * header, a typed code). The credential of a `Bearer`, `Basic` or `token` value is a value of its
 * own (see {@link credentialParts}), by the same rules.
 *
 * Every spelling of every value is compiled into one regular expression once per mask, so a text
 * is scanned once whatever the number of values; and only a text that contains a spelling's anchor
 * (4 or more letters and digits in a row, see {@link Spelling}) is scanned at all. Spellings
 * without one (`!@#$%^&*`) have a pattern of their own, which scans every text.
 */
export class SecretMask {
  private readonly values: readonly string[];
  /** The spellings of 4 or more characters that have an anchor (see {@link Spelling}), and the filter of their anchors. */
  private readonly anchored: { pattern: RegExp; filter: AnchorFilter } | null;
  /** The other spellings of 4 or more characters (too few letters and digits in a row): every text is scanned for them. */
  private readonly bare: RegExp | null;
  private readonly cutPattern: RegExp | null;
  private readonly shortPattern: RegExp | null;
  /** {@link shortPattern} without its word boundaries: a quick test that skips most texts. */
  private readonly shortProbe: RegExp | null;

  constructor(values: Iterable<string>) {
    this.values = [...values];
    const long: Spelling[] = [];
    const cuts: string[] = [];
    const short: Spelling[] = [];
    for (const value of new Set(this.values.flatMap((v) => [v, ...credentialParts(v)]))) {
      if (value.length === 0) continue;
      if (value.length < SUBSTRING_MIN_LENGTH) {
        short.push(spelling(value));
        continue;
      }
      long.push(...valueSpellings(value));
      cuts.push(cutSpelling(value));
    }
    const anchored = long.filter((s) => s.anchor.length >= ANCHOR_MIN_LENGTH);
    const filter = AnchorFilter.of([...new Set(anchored.map((s) => s.anchor))]);
    this.anchored =
      anchored.length === 0 || !filter ? null : { pattern: new RegExp(alternation(anchored), 'g'), filter };
    const bare = long.filter((s) => s.anchor.length < ANCHOR_MIN_LENGTH);
    this.bare = bare.length === 0 ? null : new RegExp(alternation(bare), 'g');
    this.cutPattern = cuts.length === 0 ? null : new RegExp(`(?:${cuts.join('|')})${PARTIAL_ESCAPE}${ELLIPSIS}`, 'g');
    this.shortPattern =
      short.length === 0 ? null : new RegExp(`(?<![\\p{L}\\p{N}_])${alternation(short)}(?![\\p{L}\\p{N}_])`, 'gu');
    this.shortProbe = short.length === 0 ? null : new RegExp(alternation(short));
  }

  /** A mask of these values and `values` too (a value found to be secret while the run goes on). */
  with(...values: string[]): SecretMask {
    const added = values.filter((v) => v.length > 0 && !this.values.includes(v));
    return added.length === 0 ? this : new SecretMask([...this.values, ...added]);
  }

  /** A mask of these values and `other`'s. */
  merged(other: SecretMask): SecretMask {
    return other === this ? this : this.with(...other.values);
  }

  /** True when the run uses no secret: nothing to mask. */
  get isEmpty(): boolean {
    return this.anchored === null && this.bare === null && this.shortPattern === null;
  }

  /** `text` with every secret value replaced by {@link MASK}. */
  text(text: string): string {
    return this.shortValues(this.truncatedValues(this.longValues(text)));
  }

  /**
   * A message shortened to fit (`…`) may end inside a secret: the part before the ellipsis that
   * starts a secret value (4 characters or more of it, in any spelling) is masked too.
   */
  private truncatedValues(text: string): string {
    if (!this.cutPattern || !text.includes(ELLIPSIS)) return text;
    return text.replace(this.cutPattern, `${MASK}${ELLIPSIS}`);
  }

  /** Only the values of 4 or more characters: safe inside structured text (JSON), where a short one could hit syntax. */
  longValues(text: string): string {
    let out = text;
    // Most texts hold no secret: one pass of the anchor filter is much faster than the pattern's scan.
    if (this.anchored?.filter.test(out)) out = out.replace(this.anchored.pattern, MASK);
    // Second: a bare spelling never contains an anchored one (its letters and digits would be its anchor).
    return this.bare ? out.replace(this.bare, MASK) : out;
  }

  private shortValues(text: string): string {
    if (!this.shortPattern || !this.shortProbe?.test(text)) return text;
    return text.replace(this.shortPattern, MASK);
  }
}

/** One group of alternatives, longest first, so a value containing another is replaced whole. */
function alternation(spellings: Spelling[]): string {
  const sorted = [...spellings].sort((a, b) => b.length - a.length).map((s) => s.pattern);
  return `(?:${[...new Set(sorted)].join('|')})`;
}

/** The cut start of a value is matched character by character up to this many characters, then by its character set. */
const CUT_EXACT_LENGTH = 16;

/**
 * The first 4 or more characters of `value`, each in any spelling: what a cut leaves of it. Past
 * its first 16 characters, any of the value's characters may follow (the pattern of a value of
 * thousands of characters must stay small: nested groups cost the regular-expression compiler
 * memory for each).
 */
function cutSpelling(value: string): string {
  const chars = spelledChars(value);
  let tail = chars.length > CUT_EXACT_LENGTH ? `(?:${[...new Set(chars.slice(CUT_EXACT_LENGTH))].join('|')})*` : '';
  for (let i = Math.min(chars.length, CUT_EXACT_LENGTH) - 1; i >= SUBSTRING_MIN_LENGTH; i--)
    tail = `(?:${chars[i]}${tail})?`;
  return `${chars.slice(0, SUBSTRING_MIN_LENGTH).join('')}${tail}`;
}
