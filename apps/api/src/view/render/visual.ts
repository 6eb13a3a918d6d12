import { attachmentClass } from '@testrun/contracts';
import { artifactPath, expiredMark } from './evidence';
import { formatBytes } from './format';
import { html, type SafeHtml } from './html';
import { heading, time, type Heading, type Paths } from './layout';
import type { ViewArtifact, ViewRun, ViewVisualChange } from '../model';

// What a run found of its snapshots against the baselines (docs/VIEW.md, "Visual changes"): each
// change with its state, its images as Playwright attached them (`home-expected.png`,
// `home-actual.png`, `home-diff.png` for `home.png`), and how to approve. The page's link is
// read-only: nothing here writes, and the approval is the API's, with a key.

/** The images Playwright attaches of one snapshot, by role. */
const ROLES = ['expected', 'actual', 'diff'] as const;
type Role = (typeof ROLES)[number];
type Images = Partial<Record<Role, ViewArtifact>>;

const CAPTIONS: Record<Role, string> = { expected: 'Expected (the baseline)', actual: 'Actual', diff: 'Diff' };

/** The attachments of the run's last attempt that Playwright made of snapshot `name`, by role. */
function imagesOf(run: ViewRun, name: string): Images {
  const ext = /\.[^./]*$/.exec(name)?.[0] ?? '';
  const stem = name.slice(0, name.length - ext.length);
  const attachments = (run.artifacts ?? []).filter((a) => a.kind === 'attachment');
  const images: Images = {};
  for (const role of ROLES) {
    const found = attachments.findLast((a) => a.name === `${stem}-${role}${ext}`);
    if (found) images[role] = found;
  }
  return images;
}

/** The state of a change in words: never only a colour. */
function badge(change: ViewVisualChange): SafeHtml {
  if (change.approvedAt)
    return html`<span class="visual-badge visual-badge-approved"
      >Approved${change.approvedBy ? html` by ${change.approvedBy}` : ''} ${time(change.approvedAt)}</span
    >`;
  if (change.kind === 'new')
    return html`<span class="visual-badge visual-badge-new">New baseline — awaiting approval</span>`;
  return html`<span class="visual-badge visual-badge-changed">Changed</span>`;
}

/** One image, linked to its full size. */
function imageFigure(
  p: Paths,
  run: ViewRun,
  change: ViewVisualChange,
  role: Role,
  a: ViewArtifact,
  caption = CAPTIONS[role],
): SafeHtml {
  const href = artifactPath(p, run, a.id);
  return html`<figure class="visual-image visual-${role}">
    <figcaption>${caption}</figcaption>
    <a href="${href}" target="_blank" rel="noopener noreferrer"
      ><img src="${href}" alt="${change.name}: ${caption}" loading="lazy" decoding="async"
    /></a>
  </figure>`;
}

/**
 * The expected image under the actual one, a range input moving the line between them (view.js).
 * Hidden until the script shows it: without it, the images side by side are the comparison.
 */
function slider(
  p: Paths,
  run: ViewRun,
  change: ViewVisualChange,
  expected: ViewArtifact,
  actual: ViewArtifact,
): SafeHtml {
  return html`<div class="visual-slider" data-visual-slider hidden>
    <div class="visual-slider-frame">
      <img class="visual-under" src="${artifactPath(p, run, expected.id)}" alt="" loading="lazy" decoding="async" />
      <img class="visual-over" src="${artifactPath(p, run, actual.id)}" alt="" loading="lazy" decoding="async" />
      <span class="visual-slider-line" aria-hidden="true"></span>
    </div>
    <label class="visual-slider-label"
      >Compare ${change.name}: expected left of the line, actual right of it
      <input type="range" min="0" max="100" value="50" data-visual-range
    /></label>
  </div>`;
}

/** A text snapshot's expected or actual file (or one of another type): its head, escaped, and its download. */
function textFigure(p: Paths, run: ViewRun, role: Role, a: ViewArtifact, caption = CAPTIONS[role]): SafeHtml {
  return html`<figure class="visual-image visual-${role}">
    <figcaption>${caption}</figcaption>
    ${a.preview ? html`<pre class="visual-text">${a.preview.text}</pre>` : ''}
    <a href="${artifactPath(p, run, a.id)}" download="${a.name}">Download ${a.name} (${formatBytes(a.sizeBytes)})</a>
  </figure>`;
}

/** What stands for a change's images: side by side (and the slider) for a changed image, the new baseline alone for a new one. */
function changeImages(p: Paths, run: ViewRun, change: ViewVisualChange): SafeHtml {
  const images = imagesOf(run, change.name);
  const present = ROLES.filter((role) => images[role]);
  const first = present[0] && images[present[0]];
  if (!first)
    return run.artifactsExpiredAt
      ? html`<p>${expiredMark('The images')}</p>`
      : html`<p class="muted">No file of it was kept with this run.</p>`;
  const kind = attachmentClass(first.contentType);
  if (change.kind === 'new') {
    // The new baseline is the image the run took: attached as actual, or as expected, or both.
    const role: Role = images.actual ? 'actual' : 'expected';
    const a = images[role] ?? first;
    return html`<div class="visual-images">
      ${kind === 'image' ? imageFigure(p, run, change, role, a, 'The new baseline') : textFigure(p, run, role, a, 'The new baseline')}
    </div>`;
  }
  const figures = present.map((role) => {
    const a = images[role];
    if (!a) return '';
    return kind === 'image' ? imageFigure(p, run, change, role, a) : textFigure(p, run, role, a);
  });
  const { expected, actual } = images;
  return html`<div class="visual-images">${figures}</div>
    ${kind === 'image' && expected && actual ? slider(p, run, change, expected, actual) : ''}`;
}

/** The command that approves, the scope its key needs, the link that approves in the browser, and that this page's link cannot. */
export function approveNote(command: string, lead = 'To approve'): SafeHtml {
  return html`<p class="visual-approve">
    ${lead}, run <code class="command">${command}</code> with an API key holding the <code>deploy</code> scope (<code
      >preview</code
    >
    is enough while its version is not the project's active one), or <code class="command">${command} --link</code> for
    a link that approves in the browser, for an hour, as that key. This page's link is read-only: it cannot approve.
  </p>`;
}

/**
 * The forms of an approval page (docs/VISUAL.md, "Approve in the view"): each posts to the page's
 * own approval link, naming the changes it approves. Only an approval link's page has them.
 */
export type ApproveForms = { action: string };

/** A form that approves the changes `ids`, its button saying what. */
export function approveForm(forms: ApproveForms, ids: readonly string[], label: string): SafeHtml {
  return html`<form class="visual-approve-form" method="post" action="${forms.action}">
    ${ids.map((id) => html`<input type="hidden" name="change" value="${id}" />`)}
    <button type="submit" class="button">${label}</button>
  </form>`;
}

/** What closes the section: the approve-all form on an approval page, else how to approve. */
function sectionClose(run: ViewRun, waiting: readonly ViewVisualChange[], forms: ApproveForms | undefined): SafeHtml {
  if (waiting.length === 0) return html`<p class="visual-approve">Every change is approved.</p>`;
  if (!forms) return approveNote(`testrun approve --run ${run.id}`);
  if (waiting.length === 1) return html``;
  return approveForm(
    forms,
    waiting.map((c) => c.id),
    `Approve all ${waiting.length} of this test`,
  );
}

/**
 * The run page's section of its visual changes; nothing when it found none. With `forms` (an
 * approval page), each change awaiting approval has its approve button.
 */
export function visualChangesSection(p: Paths, run: ViewRun, level: Heading = 2, forms?: ApproveForms): SafeHtml {
  const changes = run.visualChanges ?? [];
  if (changes.length === 0) return html``;
  const waiting = changes.filter((c) => !c.approvedAt);
  // An approval page holds one per run, inside the run's own labelled section: ids that name the
  // run, and no landmark of its own (each would have the same name).
  const sectionId = forms ? `visual-changes-${run.id}` : 'visual-changes';
  const headingId = `${sectionId}-heading`;
  const labelled = forms ? '' : html` aria-labelledby="${headingId}"`;
  return html`<section class="visual-changes" id="${sectionId}" ${labelled}>
    ${heading(level, html`Visual changes <span class="muted">(${changes.length})</span>`, headingId)}
    <ul class="visual-list">
      ${changes.map(
        (change) =>
          html`<li class="visual-change" id="visual-${change.id}" data-visual-kind="${change.kind}">
            <p class="visual-change-head"><strong class="visual-name">${change.name}</strong> ${badge(change)}</p>
            <p class="visual-path"><code>${change.path}</code></p>
            ${changeImages(p, run, change)}
            ${forms && !change.approvedAt ? approveForm(forms, [change.id], `Approve ${change.name}`) : ''}
          </li>`,
      )}
    </ul>
    ${sectionClose(run, waiting, forms)}
  </section>`;
}
