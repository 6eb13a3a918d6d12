import { formatDuration } from './format';
import { escapeHtml, html, trusted } from './html';
import { redactCredentials } from './render';

test('interpolated values are escaped, nested templates are not escaped twice', () => {
  const name = `<img src=x onerror="alert('x')">&`;
  const inner = html`<b>${name}</b>`;
  expect(html`<p title="${name}">${inner}</p>`.value).toBe(
    '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;"><b>&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</b></p>',
  );
  expect(html`${[1, '<', null, undefined, false, trusted('<br>')]}`.value).toBe('1&lt;<br>');
  expect(escapeHtml('`a`')).toBe('&#96;a&#96;');
});

test('durations read naturally', () => {
  expect(formatDuration(null)).toBe('–');
  expect(formatDuration(850)).toBe('850 ms');
  expect(formatDuration(4210)).toBe('4.2 s');
  expect(formatDuration(42_000)).toBe('42 s');
  expect(formatDuration(125_000)).toBe('2 min 05 s');
  expect(formatDuration(3_725_000)).toBe('1 h 02 min');
});

test('URL credentials are masked wherever they appear in text', () => {
  expect(redactCredentials('https://user:pass@host.test/a and http://tok@x.test')).toBe(
    'https://***@host.test/a and http://***@x.test',
  );
  expect(redactCredentials('mailto-like user@host without scheme')).toBe('mailto-like user@host without scheme');
});
