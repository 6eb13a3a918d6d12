/** Terminal colours (ESC [ … m), which Playwright may leave in messages. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/** The text without its terminal colours. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}
