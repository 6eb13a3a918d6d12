import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The loopback site the secrets sweep runs against: pages that show back whatever secret reaches
 * them, in the spelling it arrived in. Request headers (in the page and in a JSON response its
 * script fetches), typed values (in the page and the console), the raw query string of a GET form's
 * submission (`p%40ss+w0rd%21x`), the raw path and query of the URL (`p@ss%20w0rd!x`), and a 401
 * answer that quotes the credential of the `Authorization` header it refused.
 */

/** Every request the site got, with its header block: the control that the runs did send the values. */
export const received: string[] = [];

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

export function sweepSite(req: IncomingMessage, res: ServerResponse): void {
  received.push(`${req.url ?? ''} ${JSON.stringify(req.headers)}`);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/protected') return refuse(req, res);
  if (url.pathname === '/form') return html(res, FORM);
  if (url.pathname === '/login') return html(res, LOGIN);
  // The run's own headers first, so that a failure text quoting the page (and cut to fit) shows them.
  const { authorization, 'x-debug-token': debug, 'x-short': short, ...rest } = req.headers;
  const headers = JSON.stringify({ 'x-debug-token': debug, 'x-short': short, authorization, ...rest });
  if (url.pathname === '/echo.json') {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(headers);
    return;
  }
  // The path and query as they came, encoded: what a summary quoting them would carry.
  const [rawPath = '', rawQuery = ''] = (req.url ?? '').split('?');
  html(
    res,
    `<h1>Echo</h1>
<pre id="headers">${escape(headers)}</pre>
<p id="query">${escape(rawQuery)}</p>
<p id="path">${escape(rawPath)}</p>
<input id="pw" type="password"><input id="otp"><input id="pin"><input id="tok">
<p id="typed"></p><p id="fetched"></p>
<script>
  const ids = ['pw', 'otp', 'pin', 'tok'];
  const show = () => {
    const text = ids.map((id) => id + ': ' + document.getElementById(id).value + ';').join(' ');
    document.getElementById('typed').textContent = text;
    console.log('typed ' + text);
  };
  for (const id of ids) document.getElementById(id).addEventListener('input', show);
  fetch('/echo.json').then((r) => r.text()).then((t) => { document.getElementById('fetched').textContent = t; });
</script>`,
  );
}

/** A GET form: submitting it puts the typed value form-encoded into the next page's URL. */
const FORM = `<h1>Sign in</h1>
<form method="get" action="/echo"><input id="fpw" name="pw"><button id="send" type="submit">Send</button></form>`;

/** A page whose script calls the protected API and shows, and logs, its refusal. */
const LOGIN = `<h1>Login</h1><p id="denied"></p>
<script>
  fetch('/protected').then((r) => r.text()).then((t) => {
    document.getElementById('denied').textContent = t;
    console.error(t);
  });
</script>`;

/**
 * 401 with the refused credential quoted, as many APIs answer: `invalid token TOKEN` for a Bearer
 * or token credential; for Basic, the credential, the decoded `user:password` and the password.
 */
function refuse(req: IncomingMessage, res: ServerResponse): void {
  const [scheme = '', credential = ''] = (req.headers.authorization ?? '').split(' ');
  let body = `invalid token ${credential}`;
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(credential, 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    body = `invalid credentials ${credential} (${decoded}): wrong password ${password}`;
  }
  res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
}

function html(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html><head><meta charset="utf-8"><title>Sweep</title></head><body>
${body}
</body></html>`);
}
