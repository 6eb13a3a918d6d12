import { isTerminalRunStatus, type RunStatus } from '@testrun/contracts';
import { ASSETS } from '../assets';
import { formatInstant } from './format';
import { html, type SafeHtml } from './html';
import type { ViewRun, ViewSuiteRun } from '../model';

/** Where the router is mounted (`req.baseUrl`, normally `/view`); every link is built from it. */
export type Paths = { base: string };

export function runPath(p: Paths, run: Pick<ViewRun, 'id' | 'token'>): string {
  return `${p.base}/runs/${encodeURIComponent(run.id)}/${run.token}`;
}

export function suitePath(p: Paths, suite: Pick<ViewSuiteRun, 'id' | 'token'>): string {
  return `${p.base}/suite-runs/${encodeURIComponent(suite.id)}/${suite.token}`;
}

/** The URL of `status.json` while the page is live; null once it is terminal (the page stops polling). */
export function livePath(page: string, status: RunStatus): string | null {
  return isTerminalRunStatus(status) ? null : `${page}/status.json`;
}

/** The status as a chip: always written out, never only a colour. */
export function chip(status: RunStatus, attrs: SafeHtml | '' = ''): SafeHtml {
  return html`<span class="chip chip-${status}" ${attrs}>${status}</span>`;
}

export function time(date: Date | null): SafeHtml {
  if (!date) return html`<span class="muted">–</span>`;
  return html`<time datetime="${date.toISOString()}">${formatInstant(date)}</time>`;
}

/** Heading level: 2 on a run's own page, 3 inside a test of a suite page. */
export type Heading = 2 | 3 | 4;

const HEADING_TAGS = { 2: 'h2', 3: 'h3', 4: 'h4' } as const;

export function heading(level: Heading, text: string | SafeHtml, id?: string): SafeHtml {
  const tag = HEADING_TAGS[level];
  return html`<${tag}${id ? html` id="${id}"` : ''}>${text}</${tag}>`;
}

/** The facts under a page's title, as a description list of label and value pairs. */
export function metaList(items: ReadonlyArray<readonly [string, SafeHtml | string | number]>): SafeHtml {
  return html`<dl class="meta">
    ${items.map(
      ([label, value]) =>
        html`<div>
          <dt>${label}</dt>
          <dd>${value}</dd>
        </div>`,
    )}
  </dl>`;
}

/** A whole page: the hashed stylesheet and script, the body in `<main>`, the live region. */
export function layout(opts: {
  title: string;
  paths: Paths;
  live: string | null;
  body: SafeHtml;
  /** What the footer says of the page's address; by default, that it is a link to read. */
  footer?: string;
}): string {
  const { base } = opts.paths;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex, nofollow" />
        <meta name="referrer" content="no-referrer" />
        <title>${opts.title}</title>
        <link rel="stylesheet" href="${base}/assets/${ASSETS.css.name}" />
        <script src="${base}/assets/${ASSETS.js.name}" defer></script>
      </head>
      <body>
        <a class="skip-link" href="#main">Skip to content</a>
        <main id="main" ${opts.live ? html` data-live="${opts.live}"` : ''}>${opts.body}</main>
        <p class="live-note" role="status" aria-live="polite" id="live-note"></p>
        <footer class="page-footer">
          Testrun · ${opts.footer ?? "this page's address is a capability link: anyone who has it can see this page."}
        </footer>
      </body>
    </html>`.value;
}

/** A page that only says something: not found, unavailable, failed. */
export function messagePage(p: Paths, title: string, text: string): string {
  return layout({
    title,
    paths: p,
    live: null,
    body: html`<header class="page-header">
      <h1>${title}</h1>
      <p>${text}</p>
    </header>`,
  });
}
