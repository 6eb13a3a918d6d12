import type { ImageDifference } from './screenshot-comparator';
import { stepCancelled, StepFailure } from './step-failure';
import { sleep } from './time-left';

// A screenshot of a page that has stopped moving, taken as Playwright's toHaveScreenshot takes one
// (its page `expectScreenshot`): with a baseline, the first screenshot is compared with it at once;
// otherwise, or when it differs, screenshots are taken until two in a row are the same (0, 100, 250,
// 500 ms apart, then every second), and that stable one is compared with the baseline. The caller's
// screenshots disable animations and hide the caret, as Playwright's do.

/** The waits before each screenshot while the page settles; after these, {@link LATER_WAIT_MS} each. */
const FIRST_WAITS_MS = [0, 100, 250, 500];
const LATER_WAIT_MS = 1_000;

/** What settling found. */
export type Settled =
  /** The screenshot matches the baseline. */
  | { kind: 'matched' }
  /** No baseline was given: the stable screenshot. */
  | { kind: 'taken'; actual: Buffer }
  /** The stable screenshot differs from the baseline. */
  | ({ kind: 'different'; actual: Buffer } & ImageDifference)
  /** Time ran out before two screenshots in a row were the same. */
  | { kind: 'unstable' };

export interface SettleInput {
  /** Takes one screenshot (bounded by the step's time itself). */
  shoot: () => Promise<Buffer>;
  /** How `actual` differs from `expected`; null when they match. */
  differ: (actual: Buffer, expected: Buffer) => ImageDifference | null;
  /** The baseline; null when there is none yet. */
  expected: Buffer | null;
  /** When the step must end (epoch ms): no wait goes past it. */
  endsAt: number;
  /** The run's cancel: a wait ends at once, and no screenshot follows it. */
  signal?: AbortSignal;
}

/** Settles the page and compares (see the module's comment). Throws what `shoot` throws while no screenshot was taken. */
export async function settleScreenshot(input: SettleInput): Promise<Settled> {
  const { expected } = input;
  // Decoding and comparing takes far longer than comparing bytes: equal bytes are the same image,
  // and the stable screenshot, when it is the first one, differs from the baseline as the first did.
  let firstAgainstBaseline: { shot: Buffer; difference: ImageDifference | null } | null = null;
  const differ = (actual: Buffer, against: Buffer): ImageDifference | null => {
    if (actual.equals(against)) return null;
    if (against === expected && firstAgainstBaseline?.shot.equals(actual)) return firstAgainstBaseline.difference;
    const difference = input.differ(actual, against);
    if (against === expected) firstAgainstBaseline ??= { shot: actual, difference };
    return difference;
  };
  const waits = [...FIRST_WAITS_MS];
  let actual: Buffer | undefined;
  let first = true;
  for (;;) {
    const wait = waits.shift() ?? LATER_WAIT_MS;
    if (actual !== undefined && Date.now() + wait >= input.endsAt) return { kind: 'unstable' };
    if (wait > 0) await sleep(wait, input.signal);
    if (input.signal?.aborted) throw new StepFailure(stepCancelled());
    const previous: Buffer | undefined = actual;
    try {
      actual = await input.shoot();
    } catch (error) {
      // A screenshot cut off by the end of the step, after others: the page never held still.
      if (previous !== undefined && Date.now() >= input.endsAt) return { kind: 'unstable' };
      throw error;
    }
    const against = first && expected ? expected : previous;
    if (against !== undefined && differ(actual, against) === null) break;
    first = false;
  }
  if (!expected) return { kind: 'taken', actual };
  if (first) return { kind: 'matched' };
  const difference = differ(actual, expected);
  return difference ? { kind: 'different', actual, ...difference } : { kind: 'matched' };
}
