import type { TestLocation } from '@testrun/contracts';
import type { ViewRun, ViewSuiteRun } from '../model';
import { html, type SafeHtml } from './html';

/** A run of a Playwright test: it carries where the test is declared. */
type LocatedRun = ViewRun & { location: TestLocation };

function isLocated(run: ViewRun): run is LocatedRun {
  return run.location !== null;
}

/** One spec file of a suite run and its tests, in line order. */
type SpecFile = { file: string; runs: LocatedRun[] };

/** Whether a suite run's page lists its tests by spec file: it holds Playwright tests. */
export function groupsByFile(suite: Pick<ViewSuiteRun, 'runs'>): boolean {
  return suite.runs.some(isLocated);
}

/**
 * A suite run's Playwright tests by spec file, as Playwright's HTML report lists them: the files
 * in the order the suite runs them (its first test's position), the tests of a file by line, then
 * column, then the suite's order (one test in several Playwright projects). Runs without a
 * location (step tests beside Playwright ones) are left out: see {@link unlocatedRuns}.
 */
function specFiles(runs: readonly ViewRun[]): SpecFile[] {
  const files = new Map<string, LocatedRun[]>();
  for (const run of [...runs].sort((a, b) => a.position - b.position)) {
    if (!isLocated(run)) continue;
    const list = files.get(run.location.file) ?? [];
    if (list.length === 0) files.set(run.location.file, list);
    list.push(run);
  }
  return [...files].map(([file, list]) => ({
    file,
    runs: list.sort(
      (a, b) => a.location.line - b.location.line || a.location.column - b.location.column || a.position - b.position,
    ),
  }));
}

/** The runs of a suite run that have no spec file (step tests), in the suite's order. */
function unlocatedRuns(runs: readonly ViewRun[]): ViewRun[] {
  return runs.filter((run) => !isLocated(run));
}

/** `file:line`, how Playwright's reporters point at a test. */
function fileLine(location: TestLocation): string {
  return `${location.file}:${location.line}`;
}

/**
 * Under a Playwright test's name: its title path (describe titles › title), its `file:line` and
 * its Playwright project when the config names one. Nothing for a step test.
 */
export function testLocation(run: Pick<ViewRun, 'location'>): SafeHtml | '' {
  const location = run.location;
  if (!location) return '';
  return html`<span class="test-location"
    ><code data-file-line>${fileLine(location)}</code>${
      location.project ? html` <span class="chip chip-project" data-project>${location.project}</span>` : ''
    }</span
  >`;
}

/** What draws one test of the list (the suite page's entry), given whether the filter shows it. */
type Entry = (run: ViewRun) => SafeHtml;

/**
 * One section per spec file, headed by the file and its count, folded like the status groups: a
 * file opens when one of its tests needs attention, when nothing in the suite does, or under a
 * filter. A file the filter empties is hidden whole (the page's script does the same).
 */
function fileSection(
  spec: { file: string | null; runs: readonly ViewRun[] },
  index: number,
  context: { shown: ReadonlySet<string>; open: boolean; entry: Entry },
): SafeHtml {
  const { shown, entry } = context;
  const attention = spec.runs.some((r) => r.status === 'failed' || r.status === 'error');
  const hidden = spec.runs.every((r) => !shown.has(r.id)) ? html` hidden` : '';
  const failed = spec.runs.filter((r) => r.status === 'failed' || r.status === 'error').length;
  return html`<section
    class="group group-file"
    aria-labelledby="group-file-${index}"
    ${spec.file === null ? '' : html`data-file="${spec.file}"`}
    ${hidden}
  >
    <details class="group-details" ${attention || context.open ? ' open' : ''}>
      <summary>
        <h2 id="group-file-${index}">
          ${spec.file === null ? 'Step tests' : html`<code>${spec.file}</code>`}
          <span class="muted">(${spec.runs.length}${failed ? `, ${failed} failed` : ''})</span>
        </h2>
      </summary>
      <ol class="tests">
        ${spec.runs.map(entry)}
      </ol>
    </details>
  </section>`;
}

/**
 * A Playwright suite run's list: its tests by spec file (see {@link specFiles}), then any step
 * tests of the suite in a section of their own.
 */
export function fileGroups(suite: ViewSuiteRun, shown: ReadonlySet<string>, entry: Entry): SafeHtml {
  const quiet = suite.counts.failed + suite.counts.error === 0;
  const context = { shown, entry, open: quiet || shown.size < suite.runs.length };
  const files = specFiles(suite.runs);
  const rest = unlocatedRuns(suite.runs);
  return html`${files.map((spec, i) => fileSection(spec, i, context))}${
    rest.length > 0 ? fileSection({ file: null, runs: rest }, files.length, context) : ''
  }`;
}
