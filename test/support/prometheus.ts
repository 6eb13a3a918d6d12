/** One sample of a Prometheus text exposition: `name{label="value",...} value`. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** A sample's value: a float, or NaN and ±Inf in any case (as Prometheus's own parser takes them; prom-client writes `Nan`). */
function parseValue(raw: string, line: string): number {
  const lower = raw.toLowerCase();
  if (lower === 'nan') return NaN;
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  const value = Number(raw);
  if (Number.isNaN(value)) throw new Error(`not a Prometheus value: ${line}`);
  return value;
}

/**
 * Parses the Prometheus text format (version 0.0.4) into samples; comment lines (HELP, TYPE) are
 * kept apart as the type of each metric family. Throws on a line that is neither, so a malformed
 * exposition fails the test that reads it.
 */
export function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type?.[1] && type[2]) types.set(type[1], type[2]);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m?.[1] || m[3] === undefined) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) {
      if (l[1] !== undefined && l[2] !== undefined)
        labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1], labels, value: parseValue(m[3], line) });
  }
  return { samples, types };
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function sampleSum(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Fetches and parses a /metrics endpoint; fails on a status other than 200. */
export async function scrape(url: string): Promise<{ samples: Sample[]; types: Map<string, string>; text: string }> {
  const res = await fetch(url);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${text}`);
  return { ...parsePrometheus(text), text };
}
