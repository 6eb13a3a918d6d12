// Values the fuzzer tries wherever text goes: odd strings and URLs, and how they travel in a URL.

export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\r\n',
  'x\r\nX-Injected: 1',
  '\ud800',
  'a\udc00b',
  '\u2028',
  '\ufeff',
  '💥',
  '../../etc/passwd',
  '%00',
  '%ZZ',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  'null',
  '{{secrets.X}}',
];
export const ODD_URLS = [
  'http://127.0.0.1:9/',
  'https://example.test/',
  'http://[::1]:80/',
  'http://0x7f.1/',
  'http://2130706433/',
  'http://017700000001/',
  'http://169.254.169.254/latest/meta-data/',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:text/html,hi',
  'http://user:pass@example.test/',
  'http://example.test/#frag',
  'http://%00/',
  'http://exa mple.test/',
  'HTTP://EXAMPLE.TEST',
  'https://例え.テスト/',
  `http://${'a'.repeat(3000)}.test/`,
  'http://',
  '//example.test/',
  'ws://example.test/',
];

/** Every UTF-8 byte of `text` percent-encoded (a lone surrogate becomes U+FFFD, as on any wire). */
export function percentEncoded(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
}
