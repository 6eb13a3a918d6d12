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
    const network = strFromU8(out['trace.network']!);
    const trace = strFromU8(out['trace.trace']!);
    for (const text of [network, trace]) {
      expect(text).not.toContain('ZGVtbzpwcmV2aWV3');
      expect(text).not.toContain('quoted');
    }
    expect(JSON.parse(network.split('\n')[0]!).snapshot.request.headers).toEqual([
      { name: 'Authorization', value: REDACTED },
      { name: 'accept', value: 'text/html' },
    ]);
    expect(JSON.parse(trace.split('\n')[0]!).params.headers).toEqual({ authorization: REDACTED, accept: '*/*' });
    expect(JSON.parse(trace.split('\n')[1]!).message).toBe(`sent ${REDACTED} somewhere`);
    expect([...out['resources/abc.png']!]).toEqual([1, 2, 3]);
  });

  it('returns the trace unchanged when the run has no headers', () => {
    const zip = traceZip();
    expect(Buffer.from(sanitizeTrace(zip, {})).equals(Buffer.from(zip))).toBe(true);
  });
});
