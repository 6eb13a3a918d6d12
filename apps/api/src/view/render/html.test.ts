import { redactCredentials } from './format';
import { escapeHtml, html } from './html';

test('interpolated values are escaped, nested templates are not escaped twice', () => {
  const name = `<img src=x onerror="alert('x')">&`;
  const inner = html`<b>${name}</b>`;
  expect(html`<p title="${name}">${inner}</p>`.value).toBe(
    '<p title="&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;"><b>&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;</b></p>',
  );
  expect(html`${[1, '<', null, undefined, false, html`<br />`]}`.value).toBe('1&lt;<br />');
  expect(escapeHtml('`a`')).toBe('&#96;a&#96;');
});

test('literal text between values is kept as written, escapes included', () => {
  // Under another name, so the formatter leaves the literal's escapes alone.
  const tag = html;
  expect(tag`a\n${'b'}\u00e9${2}`.value).toBe('a\nb\u00e92');
  expect(html``.value).toBe('');
});

test("a template's indentation is cut to its line breaks; values keep their whitespace", () => {
  const value = 'two  spaces\n    and an indented line';
  expect(
    html`<ul>
      <li>${value}</li>
    </ul>`.value,
  ).toBe(`<ul>\n<li>${value}</li>\n</ul>`);
});

test('URL credentials are masked wherever they appear in text', () => {
  expect(redactCredentials('https://user:pass@host.test/a and http://tok@x.test')).toBe(
    'https://***@host.test/a and http://***@x.test',
  );
  expect(redactCredentials('mailto-like user@host without scheme')).toBe('mailto-like user@host without scheme');
});
