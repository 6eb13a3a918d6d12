import { isTerminalRunStatus } from '@testrun/contracts';
import { formatBytes, formatInstant, redactCredentials } from './format';
import { html, type SafeHtml } from './html';
import { heading, runPath, type Heading, type Paths } from './layout';
import type { ViewArtifact, ViewRun, ViewStep } from '../model';

// A run's evidence: its screenshots (with what the full-size viewer reads off them), its video and
// trace, and what stands in for them once retention deleted them.

export function artifactPath(p: Paths, run: ViewRun, artifactId: string): string {
  return `${runPath(p, run)}/artifacts/${encodeURIComponent(artifactId)}`;
}

export function traceViewerPath(p: Paths, traceUrl: string): string {
  return `${p.base}/trace-viewer/index.html?trace=${encodeURIComponent(traceUrl)}`;
}

export function stepScreenshot(run: ViewRun, step: ViewStep): ViewArtifact | undefined {
  const artifacts = run.artifacts ?? [];
  if (step.screenshotId) return artifacts.find((a) => a.id === step.screenshotId);
  return artifacts.find((a) => a.kind === 'screenshot' && a.stepIndex === step.index);
}

/** The screenshot of the moment a run went wrong: its failing step's, else the last one taken. */
export function failureScreenshot(run: ViewRun): ViewArtifact | undefined {
  const steps = run.steps ?? [];
  const failing =
    steps.find((s) => s.index === run.outcomeStep) ??
    steps.find((s) => s.outcome !== 'passed' && s.outcome !== 'skipped');
  const shot = failing ? stepScreenshot(run, failing) : undefined;
  if (shot) return shot;
  return (run.artifacts ?? []).filter((a) => a.kind === 'screenshot').at(-1);
}

/**
 * The order the full-size viewer (view.js) steps through a run's screenshots: when the run failed
 * or errored, the screenshot of the moment it went wrong first, then the others in step order.
 */
function viewerSequence(run: ViewRun): ViewArtifact[] {
  const shots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  const failure = run.status === 'failed' || run.status === 'error' ? failureScreenshot(run) : undefined;
  return failure ? [failure, ...shots.filter((a) => a.id !== failure.id)] : shots;
}

/** The viewer's caption of a screenshot: `Step 3 of 4: click "text=Sign in" (failed)`, else its file name. */
function viewerCaption(run: ViewRun, a: ViewArtifact): string {
  const steps = run.steps ?? [];
  const step = steps.find((s) => s.screenshotId === a.id) ?? steps.find((s) => s.index === a.stepIndex);
  const index = step?.index ?? a.stepIndex;
  if (index === null) return a.name;
  const where = `Step ${index}${run.plannedSteps ? ` of ${run.plannedSteps}` : ''}`;
  return step ? `${where}: ${redactCredentials(step.label)} (${step.outcome})` : where;
}

/**
 * What the viewer reads off a thumbnail: the sequence it belongs to (one per run and test attempt,
 * so runs and attempts never mix), its place in that sequence, and its caption.
 */
function viewerAttributes(run: ViewRun, a: ViewArtifact): SafeHtml {
  const order = viewerSequence(run).findIndex((s) => s.id === a.id);
  // A run with attempts (its own retries, or its Playwright config's) names the attempt.
  const title = run.retries > 0 || run.retry > 0 ? `${run.testName}, attempt ${run.retry + 1}` : run.testName;
  return html`data-viewer="${run.id}:${run.retry}" data-viewer-order="${order}" data-viewer-title="${title}"
  data-viewer-caption="${viewerCaption(run, a)}"`;
}

export function thumbnail(p: Paths, run: ViewRun, a: ViewArtifact, alt: string, size: 'thumb' | 'large'): SafeHtml {
  const href = artifactPath(p, run, a.id);
  return html`<a
    class="shot shot-${size}"
    href="${href}"
    target="_blank"
    rel="noopener noreferrer"
    ${viewerAttributes(run, a)}
    ><img src="${href}" alt="${alt}" loading="lazy" decoding="async"
  /></a>`;
}

/** What stands where an artifact was once retention deleted it. */
export function expiredMark(what: string): SafeHtml {
  return html`<span class="expired" title="${what} expired: deleted after the retention period">expired</span>`;
}

/** The note of a run whose artifacts retention deleted, with when. */
function expiredNote(run: ViewRun): SafeHtml {
  return html`<p class="muted expired-note">
    Expired: the screenshots, trace and video of this run were deleted on
    ${run.artifactsExpiredAt ? formatInstant(run.artifactsExpiredAt) : ''}, after the retention period.
  </p>`;
}

export function recording(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const artifacts = run.artifacts ?? [];
  const videos = artifacts.filter((a) => a.kind === 'video');
  const traces = artifacts.filter((a) => a.kind === 'trace');
  if (videos.length === 0 && traces.length === 0) {
    if (!isTerminalRunStatus(run.status) || run.status === 'skipped') return html``;
    if (run.artifactsExpiredAt)
      return html`<section class="recording">
        ${heading(level, 'Recording')} ${expiredMark('The recording')} ${expiredNote(run)}
      </section>`;
    return html`<section class="recording">
      ${heading(level, 'Recording')}
      <p class="muted">No recording was kept for this run.</p>
    </section>`;
  }
  return html`<section class="recording">
    ${heading(level, 'Recording')}
    ${videos.map((v) => html`<video class="video" controls preload="metadata" src="${artifactPath(p, run, v.id)}" aria-label="Video of ${run.testName}"><a href="${artifactPath(p, run, v.id)}">Download the video</a></video>`)}
    ${
      traces.length
        ? html`<ul class="trace-links">
            ${traces.map((t) => {
              const href = artifactPath(p, run, t.id);
              return html`<li>
                <a class="button" href="${traceViewerPath(p, href)}" target="_blank" rel="noopener noreferrer"
                  >Open the Playwright trace</a
                >
                <a href="${href}" download="${t.name}">Download ${t.name} (${formatBytes(t.sizeBytes)})</a>
              </li>`;
            })}
          </ul>`
        : ''
    }
  </section>`;
}

/** Every screenshot of a run, for its own page. */
export function screenshotGallery(p: Paths, run: ViewRun, level: Heading): SafeHtml {
  const shots = (run.artifacts ?? []).filter((a) => a.kind === 'screenshot');
  if (shots.length === 0 && run.artifactsExpiredAt)
    return html`<section class="gallery">${heading(level, 'Screenshots')} ${expiredMark('The screenshots')}</section>`;
  if (shots.length === 0) return html``;
  return html`<section class="gallery">
    ${heading(level, 'Screenshots')}
    <ul class="shots">
      ${shots.map(
        (a) =>
          html`<li>
            <figure>
              ${thumbnail(p, run, a, `Screenshot ${a.stepIndex ? `after step ${a.stepIndex}` : a.name} of ${run.testName}`, 'thumb')}
              <figcaption>${a.stepIndex ? `Step ${a.stepIndex}` : a.name}</figcaption>
            </figure>
          </li>`,
      )}
    </ul>
  </section>`;
}
