import { attachmentClass } from '@testrun/contracts';
import { formatBytes } from './format';
import { artifactPath } from './evidence';
import { html, type SafeHtml } from './html';
import { heading, type Heading, type Paths } from './layout';
import type { ViewArtifact, ViewRun } from '../model';

// What a Playwright test attached on purpose (testInfo.attach), where Playwright's HTML report shows
// it: a raster image drawn, text in a block (its head, escaped), any other file a download. The
// content type is the test's, so only ever narrows: an SVG or an HTML file is a download or text,
// never a document of the page.

function attachmentBody(p: Paths, run: ViewRun, a: ViewArtifact): SafeHtml {
  const href = artifactPath(p, run, a.id);
  const download = html`<a href="${href}" download="${a.name}">Download (${formatBytes(a.sizeBytes)})</a>`;
  switch (attachmentClass(a.contentType)) {
    case 'image':
      return html`<a class="attachment-image" href="${href}" target="_blank" rel="noopener noreferrer"
          ><img src="${href}" alt="${a.name}" loading="lazy" decoding="async"
        /></a>
        ${download}`;
    case 'text':
      return html`${
        a.preview
          ? html`<pre class="attachment-text">${a.preview.text}</pre>
              ${a.preview.truncated ? html`<p class="muted">Its beginning is shown: download it for the rest.</p>` : ''}`
          : ''
      }
      ${download}`;
    case 'binary':
      return download;
  }
}

/** The section of a run's attachments; nothing when it has none. */
export function attachmentsSection(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const attachments = (run.artifacts ?? []).filter((a) => a.kind === 'attachment');
  if (attachments.length === 0) return html``;
  return html`<section class="attachments">
    ${heading(level, html`Attachments <span class="muted">(${attachments.length})</span>`)}
    <ul class="attachment-list">
      ${attachments.map(
        (a) =>
          html`<li class="attachment" data-attachment="${a.id}">
            <p class="attachment-name"><strong>${a.name}</strong> <span class="muted">${a.contentType}</span></p>
            ${attachmentBody(p, run, a)}
          </li>`,
      )}
    </ul>
  </section>`;
}
