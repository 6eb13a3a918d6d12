/** Length of the character groups the filter indexes: every anchor is at least this long. */
const GRAM = 4;
const TABLE_BITS = 16;
const TABLE_MASK = (1 << TABLE_BITS) - 1;

type Entry = { anchor: string; offset: number };

/**
 * Tells in one pass over a text whether it contains any of a set of anchors (the parts of a
 * secret's spellings that no encoder changes), whatever their number: one `includes` per anchor
 * would read the text once per anchor, and a run's secrets, their base64 and credentials give
 * dozens. Each anchor is indexed by one group of 4 of its characters (the least word-like, so that
 * ordinary text rarely hits it) in a table of 64 Ki slots; the low bytes of the text's last 4
 * characters are packed into one number as it is read, and a hit in the table is confirmed by
 * comparing the anchor in place.
 */
export class AnchorFilter {
  private readonly table = new Uint8Array(TABLE_MASK + 1);
  private readonly entries = new Map<number, Entry[]>();

  private constructor(anchors: readonly string[]) {
    for (const anchor of anchors) {
      const offset = leastWordLike(anchor);
      const hash = packedAt(anchor, offset + GRAM - 1);
      const slot = (hash ^ (hash >>> 16)) & TABLE_MASK;
      this.table[slot] = 1;
      const list = this.entries.get(hash) ?? [];
      list.push({ anchor, offset });
      this.entries.set(hash, list);
    }
  }

  /** A filter of `anchors`; null when one is shorter than 4 characters (every text must then be scanned). */
  static of(anchors: readonly string[]): AnchorFilter | null {
    return anchors.every((a) => a.length >= GRAM) ? new AnchorFilter(anchors) : null;
  }

  /** True when `text` contains one of the anchors. */
  test(text: string): boolean {
    const table = this.table;
    let packed = 0;
    for (let i = 0; i < text.length; i++) {
      packed = (packed << 8) | (text.charCodeAt(i) & 0xff);
      const slot = (packed ^ (packed >>> 16)) & TABLE_MASK;
      if (!table[slot] || i < GRAM - 1) continue;
      for (const { anchor, offset } of this.entries.get(packed) ?? [])
        if (text.startsWith(anchor, i - GRAM + 1 - offset)) return true;
    }
    return false;
  }
}

/** The low bytes of the 4 characters of `text` ending at `end`, packed as the text's are read. */
function packedAt(text: string, end: number): number {
  let packed = 0;
  for (let i = end - GRAM + 1; i <= end; i++) packed = (packed << 8) | (text.charCodeAt(i) & 0xff);
  return packed;
}

/** The start of the group of 4 with the most characters that are not lower-case letters. */
function leastWordLike(anchor: string): number {
  let best = 0;
  let bestScore = -1;
  for (let start = 0; start + GRAM <= anchor.length; start++) {
    const score = anchor.slice(start, start + GRAM).replace(/[a-z]/g, '').length;
    if (score > bestScore) {
      best = start;
      bestScore = score;
    }
  }
  return best;
}
