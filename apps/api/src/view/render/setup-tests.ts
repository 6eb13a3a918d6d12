import { formatDuration } from '@testrun/contracts';
import type { ViewRun, ViewSetupTest } from '../model';
import { redactCredentials } from './format';
import { html, type SafeHtml } from './html';
import { chip, suitePath, type Paths } from './layout';
import { setupEvidence } from './setup-evidence';

// The setup tests of a suite run, or of a run outside a suite run (docs/VIEW.md, "Setup tests"): the
// tests of the Playwright setup projects its tests depended on, each with its outcome, steps and
// evidence; and, on the page of a run that ended setup_failed, the link to the setup test whose
// failure it ended on.

/** The anchor of a setup test on its suite run's page. */
function setupAnchor(id: string): string {
  return `setup-${id}`;
}

/** "ran 3 times, 1 failed": how many sandboxes ran it, when more than one did. */
function executionsNote(setup: ViewSetupTest): string {
  if (setup.executions <= 1) return '';
  const failed = setup.failed_executions > 0 ? `, ${setup.failed_executions} failed or ended in error` : '';
  return `ran ${setup.executions} times${failed}; shown: ${setup.failed_executions > 0 ? 'the first that failed' : 'the latest'}`;
}

function setupSteps(setup: ViewSetupTest): SafeHtml {
  if (setup.steps.length === 0) return html`<p class="muted">No steps were recorded.</p>`;
  return html`<div class="table-wrap">
    <table class="steps">
      <thead>
        <tr>
          <th scope="col">Step</th>
          <th scope="col" class="target">Where</th>
          <th scope="col">Outcome</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        ${setup.steps.map(
          (s) =>
            html`<tr class="step step-${s.outcome}" data-depth="${s.depth}">
                <th scope="row" class="label depth-${Math.min(s.depth, 6)}">${redactCredentials(s.label)}</th>
                <td class="target">${s.location ? html`<code class="muted">${s.location}</code>` : ''}</td>
                <td>${chip(s.outcome)}</td>
                <td class="num">${formatDuration(s.durationMs)}</td>
              </tr>
              ${
                s.error
                  ? html`<tr class="step-error-row">
                      <td colspan="4"><p class="step-message">${redactCredentials(s.error)}</p></td>
                    </tr>`
                  : ''
              }`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** `page`: the path of the page that shows it, under which its files are served. */
function setupEntry(p: Paths, page: string, setup: ViewSetupTest): SafeHtml {
  const failed = setup.status === 'failed' || setup.status === 'error';
  const where = `${setup.location.file}:${setup.location.line}`;
  const note = executionsNote(setup);
  return html`<li class="test setup-test" data-setup="${setup.id}" data-status="${setup.status}">
    <details id="${setupAnchor(setup.id)}" ${failed ? ' open' : ''}>
      <summary>
        <span class="summary-line"
          >${chip(setup.status)} <span class="test-name">${redactCredentials(setup.name)}</span>
          <span class="dur">${formatDuration(setup.duration_ms)}</span></span
        >
        <span class="test-summary">${redactCredentials(setup.result_summary)}</span>
      </summary>
      <div class="test-body">
        <p class="muted"><code>${where}</code>${note ? html` · ${note}` : ''}</p>
        ${setupSteps(setup)} ${setupEvidence(p, page, setup)}
      </div>
    </details>
  </li>`;
}

/**
 * The section of setup tests of a suite page (before its tests: they ran first, in each sandbox of
 * its tests, and are not counted among its tests), or of a run outside a suite run's page; `page`
 * is that page's path. Nothing when it has none.
 */
export function setupTestsSection(p: Paths, page: string, setups: readonly ViewSetupTest[] | undefined): SafeHtml | '' {
  if (!setups || setups.length === 0) return '';
  return html`<section class="group setup-tests" aria-labelledby="setup-tests-heading">
    <h2 id="setup-tests-heading">
      Setup tests <span class="muted">(${setups.length}, not counted among the tests)</span>
    </h2>
    <ol class="tests">
      ${setups.map((setup) => setupEntry(p, page, setup))}
    </ol>
  </section>`;
}

/** On a setup_failed run's page: the setup test it ended on, linked on its suite run's page (else below, on its own). */
export function failedSetupNote(p: Paths, run: ViewRun): SafeHtml | '' {
  const setup = run.failedSetup;
  if (!setup) return '';
  const { suiteRunId, suiteRunToken } = setup;
  const page =
    suiteRunId !== null && suiteRunToken !== null ? suitePath(p, { id: suiteRunId, token: suiteRunToken }) : '';
  return html`<p class="failed-setup" data-failed-setup="${setup.id}">
    It did not run: its setup test
    <a href="${page}#${setupAnchor(setup.id)}">${redactCredentials(setup.name)}</a> ${chip(setup.status)} —
    ${redactCredentials(setup.resultSummary)}
  </p>`;
}
