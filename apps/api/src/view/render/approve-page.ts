import { html } from './html';
import { chip, layout, metaList, runPath, time, type Paths } from './layout';
import { approveForm, visualChangesSection } from './visual';
import type { ViewRun } from '../model';

// An approval link's page (docs/VISUAL.md, "Approve in the view"): the visual changes of a run or
// of a suite run's runs, each with its images and an approve button, and one button that approves
// every change shown. Only an approval link, issued by the API to a key that may approve, opens it;
// every form posts back to that link and approves as that key.

/** What an approval page shows. */
export type ApprovalPageData = {
  subject: 'run' | 'suite-run';
  id: string;
  /** The suite's name and the suite run's id, or the run's test name. */
  title: string;
  /** The name of the API key the link was issued to: who approves. */
  keyName: string;
  expiresAt: Date;
  /** The runs with visual changes, those awaiting approval first. */
  runs: ViewRun[];
  /** Runs with changes left off the page (beyond its cap); approve them with the CLI. */
  leftOff: number;
  /** The page's own path: its forms post to it. */
  action: string;
  /** The read-only page of the run or suite run. */
  viewPath: string;
  /** How many changes the last approval approved (the page after a form), else null. */
  approved: number | null;
};

/** Every change of the page's runs that awaits approval. */
function waitingIds(runs: readonly ViewRun[]): string[] {
  return runs.flatMap((run) => (run.visualChanges ?? []).filter((c) => !c.approvedAt).map((c) => c.id));
}

function approvedNotice(count: number | null) {
  if (count === null) return '';
  const what = count === 1 ? '1 change' : `${count} changes`;
  return html`<p class="approval-notice" role="status">
    Approved ${what}: later runs compare against ${count === 1 ? 'it' : 'them'}.
  </p>`;
}

export function renderApprovalPage(p: Paths, page: ApprovalPageData): string {
  const forms = { action: page.action };
  const waiting = waitingIds(page.runs);
  const what = page.subject === 'run' ? 'this test' : 'this suite run';
  const body = html`<header class="page-header">
      <p class="crumbs">Approve visual changes · <a href="${page.viewPath}">the read-only page</a></p>
      <h1>${page.title}</h1>
      <p>
        Approving makes an image the baseline that later runs of its version compare against (a preview's approval holds
        for that preview until it is activated).
      </p>
      ${metaList([
        ['Approving as', html`API key <code>${page.keyName}</code>`],
        ['This link works until', time(page.expiresAt)],
        ['Awaiting approval', String(waiting.length)],
      ])}
      ${approvedNotice(page.approved)}
      ${waiting.length > 1 ? approveForm(forms, waiting, `Approve all ${waiting.length} of ${what}`) : ''}
      ${waiting.length === 0 ? html`<p>Nothing awaits approval.</p>` : ''}
      ${
        page.leftOff > 0
          ? html`<p class="muted">
              ${page.leftOff} more tests with changes are not shown:
              <code class="command">testrun approve --suite-run ${page.id}</code>
              approves them.
            </p>`
          : ''
      }
    </header>
    ${page.runs.map(
      (run) =>
        html`<section class="approval-test" aria-label="${run.testName}">
          <h2><a href="${runPath(p, run)}">${run.testName}</a> ${chip(run.status)}</h2>
          ${visualChangesSection(p, run, 3, forms)}
        </section>`,
    )}`;
  return layout({
    title: `Approve · ${page.title}`,
    paths: p,
    live: null,
    body,
    footer: "this page's address approves as the API key it was issued to: give it to no one.",
  });
}
