import { html, type SafeHtml } from './html';

/** Context kept around a difference on each side; the rest of a long text is elided. */
const CONTEXT = 60;

/** `a` and `b` as the part they share at the start, what differs, and the part they share at the end. */
function splitDifference(a: string, b: string): { prefix: string; a: string; b: string; suffix: string } {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return {
    prefix: a.slice(0, start),
    a: a.slice(start, a.length - end),
    b: b.slice(start, b.length - end),
    suffix: a.slice(a.length - end),
  };
}

function elideStart(text: string): string {
  return text.length > CONTEXT ? `…${text.slice(-CONTEXT)}` : text;
}

function elideEnd(text: string): string {
  return text.length > CONTEXT ? `${text.slice(0, CONTEXT)}…` : text;
}

/**
 * One side of the comparison: the shared parts as context (long ones elided), the differing part
 * marked (`<mark>` for received, `<del>`-like styling for expected via its class).
 */
function side(prefix: string, middle: string, suffix: string, which: 'expected' | 'received'): SafeHtml {
  return html`<pre class="compare-value compare-${which}">
${elideStart(prefix)}${middle ? html`<mark class="diff-${which}">${middle}</mark>` : ''}${elideEnd(suffix)}</pre>`;
}

/**
 * Expected against received, the difference marked on both sides: a long text shows only the part
 * around the difference. A pattern (`/…/flags`) is shown as is, since no character diff applies.
 */
export function comparisonBlock(subject: string, expected: string, received: string): SafeHtml {
  const pattern = /^\/.*\/[a-z]*$/s.test(expected);
  const parts = pattern ? { prefix: '', a: expected, b: received, suffix: '' } : splitDifference(expected, received);
  return html`<dl class="compare" aria-label="Expected and received ${subject}">
    <div>
      <dt>Expected ${subject}</dt>
      <dd>
        ${pattern ? html`<pre class="compare-value">${expected}</pre>` : side(parts.prefix, parts.a, parts.suffix, 'expected')}
      </dd>
    </div>
    <div>
      <dt>Received ${subject}</dt>
      <dd>
        ${pattern ? html`<pre class="compare-value">${received}</pre>` : side(parts.prefix, parts.b, parts.suffix, 'received')}
      </dd>
    </div>
  </dl>`;
}
