/**
 * `pnpm bench mask`: what masking a run's secrets costs on the text a run stores, the current mask
 * against the one it replaced (`BENCH_MASK_BASELINE`, a git revision, whose
 * apps/worker/src/secret-mask.ts is loaded as it was). Both mask the same corpus (about 12 MB in
 * 20,000 strings shaped like trace events, page events and step messages, 1 % of them carrying a
 * secret) with the same secrets (the sweep's 9, then 30), in alternating rounds so that a busy
 * machine slows both alike.
 * Rewrites the `mask` section of docs/reliability/secrets.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SecretMask } from '../apps/worker/src/run/secret-mask';
import { machineLine, spread, writeSection } from './report';

type Mask = { text(text: string): string };
type MaskModule = { SecretMask: new (values: Iterable<string>) => Mask };

const BASELINE = process.env.BENCH_MASK_BASELINE ?? '60c6987';
const ROUNDS = Number(process.env.BENCH_MASK_ROUNDS ?? 9);
const STRINGS = 20_000;
const FILE = path.resolve(__dirname, '../docs/reliability/secrets.md');

const SECRETS = [
  'Bearer hdr-auth-7Qm2-44e1',
  'hdr-debug-Zq81-4471ab',
  '~^',
  'ws-pass-9Kd2-771c',
  'prj-tok-Q3v8-55e0',
  'req-otp-Lm4p-9921',
  'Ъю7',
  'p@ss w0rd!x~(7)',
  `Basic ${Buffer.from('sweep-user:b4sic-Pw-81x!').toString('base64')}`,
];

/** 21 more tokens: how the cost grows with the number of secrets. */
const MORE = Array.from({ length: 21 }, (_, i) => `tok-${(i * 7_919).toString(36)}-${(i * 104_729).toString(36)}x`);

const out = (line: string) => process.stdout.write(`${line}\n`);

/** A deterministic corpus: the same strings every run. */
function corpus(): string[] {
  let seed = 42;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor(seed / 65_536) % n;
  };
  const words = ['checkout', 'cart', 'the', 'order', 'button', 'submit', 'price', '42', 'a', 'x', 'é', 'ok', 'data'];
  const text = (n: number) => Array.from({ length: n }, () => words[next(words.length)]).join(' ');
  const shapes = [
    () => `{"type":"frame-snapshot","snapshot":{"html":["DIV",{"class":"row"},["P",{},"${text(60 + next(200))}"]]}}`,
    () =>
      `{"type":"resource-snapshot","snapshot":{"request":{"url":"https://shop.example/p/${next(9999)}?q=${text(3).replace(/ /g, '+')}","headers":[{"name":"accept","value":"text/html"}]}}}`,
    () => `console log: rendered ${text(10 + next(30))}`,
    () => `expected text of "#total" to contain "${text(4)}" but it was "${text(20 + next(40))}…"`,
    () => `<div class="card"><h2>${text(5)}</h2><p>${text(100 + next(300))}</p></div>`,
  ];
  const spellings = (value: string) => [
    value,
    new URLSearchParams({ v: value }).toString().slice(2),
    encodeURI(value),
    Buffer.from(value).toString('base64'),
  ];
  return Array.from({ length: STRINGS }, (_, i) => {
    const base = shapes[next(shapes.length)]?.() ?? '';
    if (i % 100 !== 0) return base;
    const secret = SECRETS[next(SECRETS.length)] ?? '';
    const form = spellings(secret);
    return `${base} ${form[next(form.length)] ?? ''}`;
  });
}

async function loadBaseline(): Promise<MaskModule> {
  const source = execFileSync('git', ['show', `${BASELINE}:apps/worker/src/secret-mask.ts`], { encoding: 'utf8' });
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'bench-mask-')), 'secret-mask.ts');
  writeFileSync(file, source);
  return (await import(file)) as MaskModule;
}

function timeMasking(mask: Mask, strings: readonly string[]): { ms: number; changed: number } {
  const began = performance.now();
  let changed = 0;
  for (const s of strings) if (mask.text(s) !== s) changed++;
  return { ms: performance.now() - began, changed };
}

type Figures = { buildMs: number; old: number[]; current: number[]; changed: [number, number] };

async function measure(baseline: MaskModule, strings: readonly string[], secrets: readonly string[]): Promise<Figures> {
  const built = performance.now();
  const current = new SecretMask(secrets);
  const buildMs = performance.now() - built;
  const old = new baseline.SecretMask(secrets);
  const figures: Figures = { buildMs, old: [], current: [], changed: [0, 0] };
  // A warm-up round of each, not counted.
  timeMasking(old, strings);
  timeMasking(current, strings);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['old', 'current'] as const) : (['current', 'old'] as const);
    for (const which of order) {
      const result = timeMasking(which === 'old' ? old : current, strings);
      figures[which].push(result.ms);
      figures.changed[which === 'old' ? 0 : 1] = result.changed;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return figures;
}

export async function run(): Promise<void> {
  const strings = corpus();
  const bytes = strings.reduce((n, s) => n + Buffer.byteLength(s), 0);
  const baseline = await loadBaseline();
  const mbps = (ms: number) => (bytes / 2 ** 20 / (ms / 1000)).toFixed(0);
  const cell = (times: number[]) => {
    const { median, min, max } = spread(times);
    return `${median.toFixed(0)} (${min.toFixed(0)}–${max.toFixed(0)}) | ${mbps(median)}`;
  };
  const rows: string[] = [];
  // The mask before read a text once more per value prefix when it held `…`: also without any.
  const uncut = strings.map((s) => s.replace(/…/g, '...'));
  const cases = [
    { label: '9', texts: strings, secrets: SECRETS },
    { label: '30', texts: strings, secrets: [...SECRETS, ...MORE] },
    { label: '9, no text cut with `…`', texts: uncut, secrets: SECRETS },
  ];
  for (const { label, texts, secrets } of cases) {
    const f = await measure(baseline, texts, secrets);
    const ratio = (spread(f.current).median / spread(f.old).median).toFixed(2);
    rows.push(
      `| ${label} | ${cell(f.old)} | ${f.changed[0]} | ${cell(f.current)} | ${f.changed[1]} | **${ratio}** | ${f.buildMs.toFixed(1)} |`,
    );
  }
  const markdown = `### Cost of masking

${ROUNDS} alternating rounds over ${STRINGS.toLocaleString('en')} strings (${(bytes / 2 ** 20).toFixed(1)} MB, shaped like trace
events, page events and step messages; 1 % carry a secret, raw, form-encoded, \`encodeURI\`d or in
base64). Before: ${BASELINE}'s mask (raw, JSON, \`encodeURIComponent\`, HTML; one search per spelling).
Now: every spelling, base64 and credentials in one pattern, behind one anchor pass. Times in ms,
median (min–max); "changed" counts the strings masked.

| Secrets | Before ms | MB/s | Changed | Now ms | MB/s | Changed | Now/before | Build ms |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

Machine: ${machineLine()}. Reproduce: \`pnpm bench mask\`.`;
  out(markdown);
  writeSection('mask', markdown, FILE);
}
