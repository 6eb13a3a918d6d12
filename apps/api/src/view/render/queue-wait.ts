import { queueWaitText, type Queued } from '../queue-wait-text';
import { html, type SafeHtml } from './html';

/** One line under a page's header: how long the suite run or run waited in the queue and why. */
export function queueWaitNote(row: Queued): SafeHtml | '' {
  const text = queueWaitText(row);
  return text === null ? '' : html`<p class="queue-wait" data-queue-wait>${text}</p>`;
}
