import { createRequire } from 'node:module';

// Playwright's own image comparator (what toHaveScreenshot compares with: pixelmatch with its
// threshold and pixel allowances, images of different sizes padded and counted as different), taken
// from the playwright-core that the worker's playwright depends on, so that an `expectScreenshot`
// step decides as a Playwright spec of the same version would. It is not public API: the places it
// has lived are tried in turn, and a version that has it nowhere leaves the step an internal error
// (screenshot-comparator.test.ts pins that the version the worker ships has it).

/** How much two screenshots may differ and still match: Playwright's options, with its defaults. */
interface CompareOptions {
  /** How different two pixels' colours may be and still count as the same, 0 to 1. Default 0.2. */
  threshold?: number;
  /** Pixels that may differ. Default 0 (with `maxDiffPixelRatio`, the smaller of the two). */
  maxDiffPixels?: number;
  /** Share of the pixels that may differ, 0 to 1. Default 0. */
  maxDiffPixelRatio?: number;
}

/** How two screenshots differ: Playwright's words for it, and its diff image (PNG). */
export interface ImageDifference {
  message: string;
  diff: Buffer | null;
}

/** Compares two PNG images; null when they match within `options`. */
export type CompareImages = (actual: Buffer, expected: Buffer, options: CompareOptions) => ImageDifference | null;

type PlaywrightComparator = (
  actual: Buffer,
  expected: Buffer,
  options?: CompareOptions,
) => { errorMessage: string; diff?: Buffer } | null;

/** Where playwright-core has kept `getComparator`: its bundle's `utils` (1.5x on), or `lib/utils` before. */
const PLACES: ReadonlyArray<{ module: string; of: (loaded: unknown) => unknown }> = [
  {
    module: 'playwright-core/lib/coreBundle',
    of: (m) => (m as { utils?: { getComparator?: unknown } }).utils?.getComparator,
  },
  { module: 'playwright-core/lib/utils', of: (m) => (m as { getComparator?: unknown }).getComparator },
];

let loaded: CompareImages | null | undefined;

/**
 * Playwright's PNG comparator, loaded once from the playwright-core beside the worker's playwright;
 * null when that version keeps it in none of the places known.
 */
export function pngComparator(): CompareImages | null {
  if (loaded === undefined) loaded = loadComparator();
  return loaded;
}

function loadComparator(): CompareImages | null {
  const fromPlaywright = createRequire(require.resolve('playwright'));
  for (const place of PLACES) {
    let getComparator: unknown;
    try {
      getComparator = place.of(fromPlaywright(place.module));
    } catch {
      continue;
    }
    if (typeof getComparator !== 'function') continue;
    const compare: unknown = (getComparator as (mimeType: string) => unknown)('image/png');
    if (typeof compare === 'function') return wrap(compare as PlaywrightComparator);
  }
  return null;
}

function wrap(compare: PlaywrightComparator): CompareImages {
  return (actual, expected, options) => {
    // Only what the step gives: an option left out takes Playwright's default.
    const given: CompareOptions = {};
    if (options.threshold !== undefined) given.threshold = options.threshold;
    if (options.maxDiffPixels !== undefined) given.maxDiffPixels = options.maxDiffPixels;
    if (options.maxDiffPixelRatio !== undefined) given.maxDiffPixelRatio = options.maxDiffPixelRatio;
    const result = compare(actual, expected, given);
    if (!result) return null;
    return { message: result.errorMessage.trim(), diff: result.diff ?? null };
  };
}
