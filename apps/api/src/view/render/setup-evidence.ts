import { attachmentClass, type SetupArtifact } from '@testrun/contracts';
import type { ViewSetupTest } from '../model';
import { traceViewerPath } from './evidence';
import { formatBytes } from './format';
import { html, type SafeHtml } from './html';
import type { Paths } from './layout';

// The evidence of a setup test's shown execution (docs/VIEW.md, "Setup tests"), as a run's is shown:
// its screenshot drawn, its trace opening in the hosted trace viewer, its video played, and what it
// attached as attachments.ts shows a run's (an image drawn, text in a block, its head, escaped, any
// other file a download; the content type is the test's, so only ever narrows). Its files are served under the page that shows it.

function fileHref(page: string, a: SetupArtifact): string {
  return `${page}/artifacts/${encodeURIComponent(a.id)}`;
}

function download(href: string, a: SetupArtifact): SafeHtml {
  return html`<a href="${href}" download="${a.name}">Download ${a.name} (${formatBytes(a.size_bytes)})</a>`;
}

function screenshots(page: string, setup: ViewSetupTest, shots: SetupArtifact[]): SafeHtml | '' {
  if (shots.length === 0) return '';
  return html`<ul class="shots">
    ${shots.map((a, order) => {
      const href = fileHref(page, a);
      // The full-size viewer (view.js) reads its sequence off these: one per setup test.
      return html`<li>
        <figure>
          <a
            class="shot shot-thumb"
            href="${href}"
            target="_blank"
            rel="noopener noreferrer"
            data-viewer="setup:${setup.id}"
            data-viewer-order="${order}"
            data-viewer-title="${setup.name}"
            data-viewer-caption="${a.name}"
            ><img src="${href}" alt="Screenshot of ${setup.name}" loading="lazy" decoding="async"
          /></a>
          <figcaption>${a.name}</figcaption>
        </figure>
      </li>`;
    })}
  </ul>`;
}

function recordings(p: Paths, page: string, setup: ViewSetupTest, files: SetupArtifact[]): SafeHtml[] {
  return files.map((a) => {
    const href = fileHref(page, a);
    if (a.kind === 'video')
      return html`<video class="video" controls preload="metadata" src="${href}" aria-label="Video of ${setup.name}">
        <a href="${href}">Download the video</a>
      </video>`;
    return html`<p class="trace-links">
      <a class="button" href="${traceViewerPath(p, href)}" target="_blank" rel="noopener noreferrer"
        >Open the Playwright trace</a
      >
      ${download(href, a)}
    </p>`;
  });
}

function attachmentBody(page: string, setup: ViewSetupTest, a: SetupArtifact): SafeHtml {
  const href = fileHref(page, a);
  switch (attachmentClass(a.content_type)) {
    case 'image':
      return html`<a class="attachment-image" href="${href}" target="_blank" rel="noopener noreferrer"
          ><img src="${href}" alt="${a.name}" loading="lazy" decoding="async"
        /></a>
        ${download(href, a)}`;
    case 'text': {
      const preview = setup.previews?.get(a.id);
      return html`${
        preview
          ? html`<pre class="attachment-text">${preview.text}</pre>
              ${preview.truncated ? html`<p class="muted">Its beginning is shown: download it for the rest.</p>` : ''}`
          : ''
      }
      ${download(href, a)}`;
    }
    case 'binary':
      return download(href, a);
  }
}

function attachment(page: string, setup: ViewSetupTest, a: SetupArtifact): SafeHtml {
  const body = attachmentBody(page, setup, a);
  return html`<li class="attachment" data-attachment="${a.id}">
    <p class="attachment-name"><strong>${a.name}</strong> <span class="muted">${a.content_type}</span></p>
    ${body}
  </li>`;
}

/** A setup test's evidence, under its entry; nothing when none was kept. */
export function setupEvidence(p: Paths, page: string, setup: ViewSetupTest): SafeHtml | '' {
  const files = setup.artifacts ?? [];
  if (files.length === 0) return '';
  const of = (kind: SetupArtifact['kind']) => files.filter((a) => a.kind === kind);
  const attachments = of('attachment');
  return html`<div class="setup-evidence" data-setup-evidence="${setup.id}">
    ${screenshots(page, setup, of('screenshot'))} ${recordings(p, page, setup, [...of('video'), ...of('trace')])}
    ${
      attachments.length > 0
        ? html`<ul class="attachment-list">
            ${attachments.map((a) => attachment(page, setup, a))}
          </ul>`
        : ''
    }
  </div>`;
}
