import { appendFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LineTail } from './tail';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'testrun-tail-'));
});

afterEach(() => rm(dir, { recursive: true, force: true }));

/** Every line the tail hands on after `writes` are appended, each read before the next is written. */
async function tailed(writes: string[], maxLineBytes: number): Promise<string[]> {
  const file = path.join(dir, 'results.jsonl');
  const lines: string[] = [];
  const tail = new LineTail(dir, 'results.jsonl', (line) => lines.push(line), 60_000, maxLineBytes);
  for (const text of writes) {
    await appendFile(file, text);
    // Reads what is there so far, as a poll would.
    await (tail as unknown as { read(): Promise<void> }).read();
  }
  await tail.stop();
  return lines;
}

test('lines split across reads and writes come whole, in order; the last one without its newline too', async () => {
  const long = 'é'.repeat(100_000); // 200 KB: over several 64 KiB reads, characters cut between them
  const lines = await tailed(['{"a":1}\n{"b":', `"${long}"}\n\n`, '{"c":3}'], 1024 * 1024);
  expect(lines).toEqual(['{"a":1}', `{"b":"${long}"}`, '{"c":3}']);
});

test('a line over the cap is dropped as it comes: its head and length reach the reader, the next line whole', async () => {
  const head = '{"type":"attempt","file":"shop.spec.js"';
  const big = `${head},"steps":"${'x'.repeat(300_000)}"}`;
  const lines = await tailed([`{"a":1}\n${big.slice(0, 100_000)}`, `${big.slice(100_000)}\n{"b":2}\n`], 128 * 1024);
  expect(lines).toHaveLength(3);
  expect(lines[0]).toBe('{"a":1}');
  const dropped = JSON.parse(lines[1] ?? '') as { type: string; bytes: number; head: string };
  expect(dropped).toMatchObject({ type: 'oversized', bytes: Buffer.byteLength(big) });
  expect(dropped.head.startsWith(head)).toBe(true);
  expect(dropped.head.length).toBe(64 * 1024);
  expect(lines[2]).toBe('{"b":2}');
});

test('a line appended is read when it is written, not at the next poll', async () => {
  const file = path.join(dir, 'results.jsonl');
  const lines: string[] = [];
  let heard = () => {};
  // Polls every 10 minutes: only the directory's watch can bring the lines within the test's time.
  const tail = new LineTail(
    dir,
    'results.jsonl',
    (line) => {
      lines.push(line);
      heard();
    },
    600_000,
  );
  tail.start();
  try {
    for (const line of ['{"a":1}', '{"b":2}']) {
      const arrived = new Promise<void>((resolve) => (heard = resolve));
      await appendFile(file, `${line}\n`);
      await arrived;
    }
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  } finally {
    await tail.stop();
  }
});

test('after its watch fails the tail reads every intervalMs again, not once a second', async () => {
  const tail = new LineTail(dir, 'results.jsonl', () => {}, 50);
  const every = jest.spyOn(global, 'setInterval');
  try {
    tail.start();
    expect(every.mock.calls.map((call) => call[1])).toEqual([1_000]);
    (tail as unknown as { watcher: NodeJS.EventEmitter }).watcher.emit('error', new Error('watch failed'));
    expect(every.mock.calls.map((call) => call[1])).toEqual([1_000, 50]);
  } finally {
    every.mockRestore();
    await tail.stop();
  }
});

test('a results folder that is a symlink to a host folder: the tail reads none of its lines', async () => {
  // The scratch directory's folders are the sandbox's: a test can leave one as a symlink to the host's.
  const scratch = path.join(dir, 'scratch');
  const host = path.join(dir, 'host');
  await mkdir(scratch);
  await mkdir(host);
  await writeFile(path.join(host, 'results.jsonl'), '{"host":"secret"}\n');
  await symlink(host, path.join(scratch, '.testrun'));
  const lines: string[] = [];
  const tail = new LineTail(scratch, '.testrun/results.jsonl', (line) => lines.push(line), 60_000);
  await tail.stop();
  expect(lines).toEqual([]);
});
