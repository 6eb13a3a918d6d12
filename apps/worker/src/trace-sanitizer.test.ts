import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
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
    const out = unzipSync(sanitizeTrace(traceZip(), { Authorization: SECRET, 'X-Bypass': BYPASS }));
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

  it('returns the trace unchanged when the run has no headers', () => {
    const zip = traceZip();
    expect(Buffer.from(sanitizeTrace(zip, {})).equals(Buffer.from(zip))).toBe(true);
  });
});
