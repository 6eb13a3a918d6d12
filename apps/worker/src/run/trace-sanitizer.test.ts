import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { SecretMask } from './secret-mask';
import { REDACTED, sanitizeTrace } from './trace-sanitizer';

const SECRET = 'Basic ZGVtbzpwcmV2aWV3';
const BYPASS = 'bypass-"quoted"-value';

function traceZip(): Uint8Array {
  const network = [
    JSON.stringify({
      type: 'resource-snapshot',
      snapshot: {
        request: {
          url: 'http://t/',
          headers: [
            { name: 'Authorization', value: SECRET },
            { name: 'accept', value: 'text/html' },
          ],
        },
      },
    }),
    JSON.stringify({
      type: 'resource-snapshot',
      snapshot: { request: { url: 'http://t/a', headers: [{ name: 'x-bypass', value: BYPASS }] } },
    }),
  ].join('\n');
  const trace = [
    JSON.stringify({
      type: 'before',
      method: 'continue',
      params: { headers: { authorization: SECRET, accept: '*/*' } },
    }),
    JSON.stringify({ type: 'log', message: `sent ${SECRET} somewhere` }),
  ].join('\n');
  return zipSync({
    'trace.network': strToU8(network),
    'trace.trace': strToU8(trace),
    'resources/abc.png': new Uint8Array([1, 2, 3]),
  });
}

describe('sanitizeTrace', () => {
  it('removes every header value of the run from every text entry and keeps the rest', () => {
    const out = unzipSync(sanitizeTrace(traceZip(), ['Authorization', 'X-Bypass'], new SecretMask([SECRET, BYPASS])));
    const entry = (name: string): Uint8Array => {
      const bytes = out[name];
      if (!bytes) throw new Error(`the sanitized trace has no ${name}`);
      return bytes;
    };
    /** The entry's JSON lines, as records. */
    const records = (name: string) =>
      strFromU8(entry(name))
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const text of [strFromU8(entry('trace.network')), strFromU8(entry('trace.trace'))]) {
      expect(text).not.toContain('ZGVtbzpwcmV2aWV3');
      expect(text).not.toContain('quoted');
    }
    const [request] = records('trace.network');
    const [call, log] = records('trace.trace');
    expect(request).toMatchObject({
      snapshot: {
        request: {
          headers: [
            { name: 'Authorization', value: REDACTED },
            { name: 'accept', value: 'text/html' },
          ],
        },
      },
    });
    expect(call).toMatchObject({ params: { headers: { authorization: REDACTED, accept: '*/*' } } });
    expect(log).toMatchObject({ message: `sent ${REDACTED} somewhere` });
    expect([...entry('resources/abc.png')]).toEqual([1, 2, 3]);
  });

  it('masks secret values in action parameters, console text and text resources, short ones as whole words', () => {
    const zip = zipSync({
      'trace.trace': strToU8(
        [
          JSON.stringify({ type: 'before', method: 'fill', params: { selector: '#pw', value: 's3cret-pass' } }),
          JSON.stringify({ type: 'console', text: 'pin is 7q; 7queen stays', line: 7 }),
        ].join('\n'),
      ),
      'resources/5f1e.html': strToU8('<p>Echo: s3cret-pass and 7q</p>'),
      'resources/a.jpeg': new Uint8Array([0xff, 0xd8, 0, 1]),
    });
    const out = unzipSync(sanitizeTrace(zip, [], new SecretMask(['s3cret-pass', '7q'])));
    const text = (name: string) => strFromU8(out[name] ?? new Uint8Array());
    const [fill, consoleLine] = text('trace.trace')
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(fill).toMatchObject({ params: { selector: '#pw', value: REDACTED } });
    expect(consoleLine).toEqual({ type: 'console', text: `pin is ${REDACTED}; 7queen stays`, line: 7 });
    expect(text('resources/5f1e.html')).toBe(`<p>Echo: ${REDACTED} and ${REDACTED}</p>`);
    expect([...(out['resources/a.jpeg'] ?? [])]).toEqual([0xff, 0xd8, 0, 1]);
  });

  it('masks the value of a password input of a DOM snapshot wherever it occurs, though no secret named it', () => {
    const snapshot = (html: unknown) => JSON.stringify({ type: 'frame-snapshot', snapshot: { html } });
    const zip = zipSync({
      'trace.trace': strToU8(
        [
          JSON.stringify({ type: 'before', method: 'fill', params: { selector: '#pw', value: 'typed-pass-1' } }),
          snapshot([
            'HTML',
            {},
            [
              'BODY',
              {},
              ['INPUT', { __playwright_value_: 'typed-pass-1', type: 'Password' }],
              ['INPUT', { value: 'ada' }],
            ],
          ]),
          snapshot(['HTML', {}, [[1, 2]], ['P', {}, 'Welcome ada']]),
        ].join('\n'),
      ),
      'resources/post.dat': strToU8('user=ada&password=typed-pass-1'),
    });
    const out = unzipSync(sanitizeTrace(zip, [], new SecretMask([])));
    const text = (name: string) => strFromU8(out[name] ?? new Uint8Array());
    expect(text('trace.trace')).not.toContain('typed-pass-1');
    expect(text('trace.trace')).toContain(`"__playwright_value_":"${REDACTED}"`);
    // A value of any other input stays readable.
    expect(text('trace.trace')).toContain('"value":"ada"');
    expect(text('resources/post.dat')).toBe(`user=ada&password=${REDACTED}`);
  });

  it('returns the trace unchanged when the run has no headers', () => {
    const zip = traceZip();
    expect(Buffer.from(sanitizeTrace(zip, [], new SecretMask([]))).equals(Buffer.from(zip))).toBe(true);
  });
});
