import type { ViewDeployment } from '../model';
import { html, type SafeHtml } from './html';

/**
 * What the service does not apply of a version's Playwright config (a `webServer`, another
 * @playwright/test), as discovery warned when it was deployed: on the page of every run and suite
 * run of that version, so whoever reads a verdict knows what it was reached under. Discovery's text
 * is escaped like any value.
 */
export function deploymentWarnings(deployment: ViewDeployment | undefined): SafeHtml | '' {
  if (!deployment || deployment.warnings.length === 0) return '';
  return html`<section class="deployment-warnings" aria-labelledby="deployment-warnings-heading">
    <h2 id="deployment-warnings-heading">Warnings of version ${deployment.version}</h2>
    <ul>
      ${deployment.warnings.map((warning) => html`<li>${warning}</li>`)}
    </ul>
  </section>`;
}

/**
 * Beside a page's status: that the run or suite run executed a preview (a version that was not the
 * project's active one when it was enqueued), and which version. Nothing for the active version.
 */
export function previewMark(deployment: ViewDeployment | undefined): SafeHtml | '' {
  if (!deployment?.preview) return '';
  return html` <span class="chip chip-preview" data-preview>preview of version ${deployment.version}</span>`;
}

/** The header's `Version` entry: the version's number, and whether it ran as a preview. */
export function versionMeta(deployment: ViewDeployment | undefined): Array<readonly [string, string]> {
  if (!deployment) return [];
  const preview = deployment.preview ? ' (a preview: not the active version when it was enqueued)' : '';
  return [['Version', `${deployment.version}${preview}`]];
}
