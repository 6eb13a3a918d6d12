/** The markdown of `pnpm bench view-visual`'s section: the loads' figures and the targets, met or missed. */
import { spread } from '../report';
import type { LoadSample } from './measure';

/** The figures of one page at one width. */
export type PageResult = { page: 'suite run' | 'run'; width: number; samples: LoadSample[] };

/** What the section says of the run besides the figures. */
export type RunFacts = {
  machine: string;
  date: string;
  loadStart: number;
  loadEnd: number;
  runs: number;
  specFiles: number;
  rounds: number;
  variants: number;
  /** The stored PNGs' sizes, bytes, by role. */
  pngBytes: { expected: number[]; actual: number[]; diff: number[] };
};

const TARGET_BYTES = 500 * 1024;
const TARGET_MS = 1500;

const kb = (n: number) => Math.round(n / 1024).toLocaleString('en-US');
const ms = (n: number) => n.toFixed(0);

/** Median (min–max) of `values`, formatted; one figure when they are all the same. */
function range(values: number[], format: (n: number) => string): string {
  const s = spread(values);
  return s.min === s.max ? format(s.median) : `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

type Tallies = LoadSample['before'];
/** Everything but images: the page, its CSS and script, and any other response. */
const nonImage = (t: Tallies) => t.document.bytes + t.css.bytes + t.js.bytes + t.other.bytes;
const total = (t: Tallies) => nonImage(t) + t.image.bytes;

function row(r: PageResult): string {
  const of = (pick: (x: LoadSample) => number, format: (n: number) => string) => range(r.samples.map(pick), format);
  const first = r.samples[0];
  const parts = first
    ? `document ${kb(first.before.document.bytes)} + CSS ${kb(first.before.css.bytes)} + JS ${kb(first.before.js.bytes)}`
    : '–';
  return [
    `| ${r.page} | ${r.width} px`,
    `${of((x) => nonImage(x.before), kb)} (${parts})`,
    `${of((x) => x.before.image.count, String)} of ${first?.images.all ?? '–'}: ${of((x) => x.before.image.bytes, kb)}`,
    `${of((x) => total(x.after), kb)} (${of((x) => x.after.image.count, String)} images)`,
    of((x) => x.interactiveMs, ms),
    of((x) => x.domContentLoadedMs, ms),
    `${of((x) => x.loadMs, ms)} |`,
  ].join(' | ');
}

/** Which of the page's sections its images are in. */
function whereImages(r: PageResult): string {
  const i = r.samples[0]?.images;
  if (!i) return '';
  return (
    `- The ${r.page} page shows ${i.all} images: ${i.visual} in its Visual changes section, ${i.attachments} in ` +
    `Attachments sections (where both show a file, it is the same file, fetched once).`
  );
}

/** The verdicts: each page and width against 500 KB (without and with the images that came unscrolled) and 1.5 s. */
function verdicts(results: PageResult[]): string[] {
  return results.map((r) => {
    const before = spread(r.samples.map((x) => nonImage(x.before))).median;
    const withImages = spread(r.samples.map((x) => total(x.before))).median;
    const interactive = spread(r.samples.map((x) => x.interactiveMs));
    const yes = (ok: boolean) => (ok ? 'met' : '**missed**');
    return (
      `| ${r.page}, ${r.width} px | ${kb(before)} KB: ${yes(before <= TARGET_BYTES)}; ` +
      `with the images that load before any scroll ${kb(withImages)} KB: ${yes(withImages <= TARGET_BYTES)} | ` +
      `${interactive.median.toFixed(0)} ms (slowest ${interactive.max.toFixed(0)}): ${yes(interactive.median <= TARGET_MS)} |`
    );
  });
}

export function sectionMarkdown(facts: RunFacts, results: PageResult[]): string {
  const encoding = results[0]?.samples[0]?.encoding ?? 'unknown';
  const png = (role: keyof RunFacts['pngBytes']) => range(facts.pngBytes[role], kb);
  return [
    '## Visual changes in the view',
    '',
    `\`pnpm bench view-visual\` (\`bench/view-visual/\`): the view's pages of a suite run whose ${facts.runs} runs each found a changed screenshot,`,
    'opened in Chromium, counted on the wire and timed. Targets: 500 KB before the images load lazily, interactive within 1.5 s.',
    '',
    `- ${facts.machine}; measured ${facts.date} on a 2-core machine that other work shared meanwhile (load average`,
    `  ${facts.loadStart.toFixed(1)} at the start, ${facts.loadEnd.toFixed(1)} at the end): the times are indicative, their spreads say how much; the bytes do not depend on it.`,
    `- The suite run: ${facts.runs} Playwright runs in ${facts.specFiles} spec files, each failed \`screenshot_changed\` with one`,
    '  `visual_changes` row (`changed`) and its expected, actual and diff PNGs as attachments in the artifact store: 1280×720',
    `  screenshots Chromium took of a generated dashboard (expected ${png('expected')} KB, actual ${png('actual')} KB, diff ${png('diff')} KB;`,
    `  ${facts.variants} different sets, each run's stored as files of its own). No step rows or traces: only what the visual changes add.`,
    '  Written directly into a freshly migrated database; the view router served it in the same process, on loopback.',
    `- Each page opened ${facts.rounds} times (after one load not counted), a fresh browser context each (nothing cached), 1440×900 and`,
    '  390×844, no network throttling. Bytes: every response as DevTools counts it on the wire (headers and body as received);',
    `  the pages came ${encoding === 'none' ? 'uncompressed' : `\`${encoding}\`-compressed`}, as Chromium asks for them over plain HTTP. "Before images": the page,`,
    '  its CSS and script (and any other response) once it is interactive and its network quiet, before any scroll; the images',
    '  that loaded by then counted apart; "after scrolling": everything, once the page was scrolled a screen at a time to its end.',
    "- Interactive: navigation start until the page's script has wired it (`main[data-ready]`), as `pnpm bench view` defines it;",
    '  DOMContentLoaded and the load event from the navigation timing. Median (min–max) of the counted loads.',
    '',
    '| Page | Width | Before images, KB | Images loaded before scrolling (of those on the page), KB | After scrolling to the end, KB | Interactive (ms) | DOMContentLoaded (ms) | Load event (ms) |',
    '|---|---|---|---|---|---|---|---|',
    ...results.map(row),
    '',
    ...results.filter((r) => r.width === results[0]?.width).map(whereImages),
    '',
    '| Page | ≤ 500 KB before the images load lazily | Interactive ≤ 1.5 s (median) |',
    '|---|---|---|',
    ...verdicts(results),
  ].join('\n');
}
