/** What replaces a secret value wherever a run's output would show it. */
export const MASK = '****';

const ELLIPSIS = '…';

/** Values this long or longer are masked wherever they occur, inside other text too. */
const SUBSTRING_MIN_LENGTH = 4;

/**
 * Masks the secret values a run uses (its header values and the secret variables its steps
 * reference) in any text the run writes: step rows, summaries, messages, logs and the trace.
 *
 * A value of 4 or more characters is replaced wherever it occurs, also in its JSON-escaped,
 * URL-encoded and HTML-escaped spellings. A value of 1 to 3 characters is replaced only where it
 * stands on its own, not inside a longer word or number: `pin 42` becomes `pin ****` for the secret
 * `42`, while `1421` and `answer` stay readable. Masking every substring would turn all text to
 * stars for a one-letter secret; a value that short is weak anyway, and this keeps it out of every
 * place it appears as itself (a field's value, an echoed header, a typed code).
 */
export class SecretMask {
  private readonly values: readonly string[];
  private readonly forms: string[];
  private readonly shortPattern: RegExp | null;

  constructor(values: Iterable<string>) {
    this.values = [...values];
    const forms = new Set<string>();
    const short = new Set<string>();
    for (const value of this.values) {
      if (value.length === 0) continue;
      if (value.length < SUBSTRING_MIN_LENGTH) {
        short.add(value);
        continue;
      }
      for (const form of spellings(value)) forms.add(form);
    }
    // Longest first, so a value containing another is replaced whole.
    this.forms = [...forms].sort((a, b) => b.length - a.length);
    this.shortPattern =
      short.size === 0
        ? null
        : new RegExp(
            `(?<![\\p{L}\\p{N}_])(?:${[...short]
              .sort((a, b) => b.length - a.length)
              .map(escapeRegExp)
              .join('|')})(?![\\p{L}\\p{N}_])`,
            'gu',
          );
  }

  /** A mask of these values and `values` too (a value found to be secret while the run goes on). */
  with(...values: string[]): SecretMask {
    const added = values.filter((v) => v.length > 0 && !this.values.includes(v));
    return added.length === 0 ? this : new SecretMask([...this.values, ...added]);
  }

  /** True when the run uses no secret: nothing to mask. */
  get isEmpty(): boolean {
    return this.forms.length === 0 && this.shortPattern === null;
  }

  /** `text` with every secret value replaced by {@link MASK}. */
  text(text: string): string {
    return this.shortValues(this.truncatedValues(this.longValues(text)));
  }

  /**
   * A message shortened to fit (`…`) may end inside a secret: the part before the ellipsis that
   * starts a secret value (4 characters or more of it) is masked too.
   */
  private truncatedValues(text: string): string {
    if (!text.includes(ELLIPSIS)) return text;
    let out = text;
    for (const form of this.forms)
      for (let length = form.length - 1; length >= SUBSTRING_MIN_LENGTH; length--) {
        const cut = `${form.slice(0, length)}${ELLIPSIS}`;
        if (out.includes(cut)) out = out.split(cut).join(`${MASK}${ELLIPSIS}`);
      }
    return out;
  }

  /** Only the values of 4 or more characters: safe inside structured text (JSON), where a short one could hit syntax. */
  longValues(text: string): string {
    let out = text;
    for (const form of this.forms) if (out.includes(form)) out = out.split(form).join(MASK);
    return out;
  }

  private shortValues(text: string): string {
    return this.shortPattern ? text.replace(this.shortPattern, MASK) : text;
  }
}

/** The ways a value may be written in a page, a URL, a JSON document or a trace. */
function spellings(value: string): string[] {
  const html = value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
  return [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value), html];
}

function escapeRegExp(text: string): string {
  // Syntax characters only: the `u` flag refuses any other escaped character.
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
