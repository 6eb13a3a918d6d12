/**
 * The head-to-head's target: a small site with a realistic sign-up form (a stylesheet and a script
 * fetched as separate files, a header, a form with labels) whose submit answers after a short
 * client-side delay, the way a page waiting on its own API does. Served on 127.0.0.1.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How long the form takes to answer after a click, in milliseconds. */
export const FORM_DELAY_MS = 200;

const STYLE = `
:root { font-family: system-ui, sans-serif; color: #1f2328; }
body { margin: 0; background: #f6f8fa; }
header { display: flex; gap: 1rem; align-items: center; padding: 0.75rem 1.5rem; background: #24292f; color: #fff; }
header a { color: #fff; text-decoration: none; }
main { max-width: 32rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border: 1px solid #d0d7de; border-radius: 6px; }
label { display: block; margin: 0.75rem 0 0.25rem; font-weight: 600; }
input, select { width: 100%; padding: 0.4rem; border: 1px solid #d0d7de; border-radius: 6px; box-sizing: border-box; }
button { margin-top: 1rem; padding: 0.5rem 1rem; background: #1f883d; color: #fff; border: 0; border-radius: 6px; }
#result { min-height: 1.5rem; margin-top: 1rem; font-weight: 600; }
footer { text-align: center; color: #57606a; font-size: 0.85rem; }
`;

const SCRIPT = `
document.getElementById('signup').addEventListener('submit', (event) => {
  event.preventDefault();
  const name = document.getElementById('name').value;
  const result = document.getElementById('result');
  result.textContent = 'Saving…';
  setTimeout(() => { result.textContent = 'Thanks, ' + name; }, ${FORM_DELAY_MS});
});
`;

function formPage(n: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign up ${n} - Testrun Shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/app.css"></head>
<body>
<header><strong>Testrun Shop</strong><a href="/">Home</a><a href="/signup">Sign up</a><a href="/help">Help</a></header>
<main>
<h1>Create your account</h1>
<form id="signup">
<label for="name">Name</label><input id="name" name="name" autocomplete="name">
<label for="email">Email</label><input id="email" name="email" type="email">
<label for="plan">Plan</label><select id="plan" name="plan"><option>Free</option><option>Team</option></select>
<button id="submit" type="submit">Sign up</button>
</form>
<p id="result" role="status"></p>
</main>
<footer>Form ${n}</footer>
<script src="/app.js" defer></script>
</body></html>`;
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Starts the form site on a free loopback port. */
export async function startFormSite(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://form.invalid');
    if (url.pathname === '/app.css') return send(res, 200, 'text/css', STYLE);
    if (url.pathname === '/app.js') return send(res, 200, 'text/javascript', SCRIPT);
    if (url.pathname === '/signup')
      return send(res, 200, 'text/html; charset=utf-8', formPage(url.searchParams.get('n') ?? ''));
    return send(res, 404, 'text/plain', 'not found');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
