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
