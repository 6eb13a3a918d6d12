import { html, type SafeHtml } from './html';
import { runPath, type Paths } from './layout';
import { approveNote } from './visual';
import type { ViewSuiteRun, ViewVisualSummary } from '../model';

// A suite page's summary of what its runs found of their snapshots (docs/VIEW.md, "Visual
// changes"): each test that found something, its counts, linked to its run's page where the images
// are, and the command that approves them all. The page's link is read-only.

/** "2 changed and 1 new awaiting approval, 1 approved". */
function countsText(s: Pick<ViewVisualSummary, 'changed' | 'new' | 'approved'>): string {
  const waiting = [s.changed ? `${s.changed} changed` : '', s.new ? `${s.new} new` : ''].filter(Boolean).join(' and ');
  return [waiting ? `${waiting} awaiting approval` : '', s.approved ? `${s.approved} approved` : '']
    .filter(Boolean)
    .join(', ');
}

/** The snapshots' names as listed (the first few), and how many more there are. */
function namesOf(s: ViewVisualSummary): SafeHtml {
  const more = s.changed + s.new + s.approved - s.names.length;
  return html`<span class="visual-names"
    >${s.names.map((name, i) => html`${i > 0 ? ', ' : ''}<code>${name}</code>`)}${more > 0 ? ` and ${more} more` : ''}</span
  >`;
}

/** The suite page's section of its runs' visual changes; nothing when none found any. */
export function visualSummarySection(p: Paths, suite: ViewSuiteRun): SafeHtml {
  const found = suite.visualChanges;
  if (!found || found.size === 0) return html``;
  const tests = suite.runs.flatMap((run) => {
    const summary = found.get(run.id);
    return summary ? [{ run, summary }] : [];
  });
  const total = { changed: 0, new: 0, approved: 0 };
  for (const { summary } of tests) {
    total.changed += summary.changed;
    total.new += summary.new;
    total.approved += summary.approved;
  }
  return html`<section class="visual-changes" id="visual-changes" aria-labelledby="visual-changes-heading">
    <h2 id="visual-changes-heading">
      Visual changes
      <span class="muted">(${tests.length} ${tests.length === 1 ? 'test' : 'tests'}: ${countsText(total)})</span>
    </h2>
    <ul class="visual-tests">
      ${tests.map(
        ({ run, summary }) =>
          html`<li class="visual-test" data-visual-run="${run.id}">
            <a href="${runPath(p, run)}#visual-changes">${run.testName}</a>
            <span class="visual-counts">${countsText(summary)}</span>
            ${namesOf(summary)}
          </li>`,
      )}
    </ul>
    ${
      total.changed + total.new > 0
        ? approveNote(`testrun approve --suite-run ${suite.id}`, 'To approve them all')
        : html`<p class="visual-approve">Every change is approved.</p>`
    }
  </section>`;
}
