import {
  interruptLine,
  MAX_LINE_BYTES,
  recordLine,
  type AttemptRecord,
  type ReporterRecord,
  type TestIdentity,
} from './protocol';
import { identityOfHead, readLine } from './protocol-read';

const identity: TestIdentity = {
  file: 'e2e/a.spec.ts',
  line: 3,
  column: 5,
  project: 'chromium',
  titlePath: ['cart', 'buys'],
};

const attempt: AttemptRecord = {
  type: 'attempt',
  ...identity,
  final: true,
  endedAt: 1_000,
  retry: 0,
  status: 'failed',
  expectedStatus: 'passed',
  durationMs: 12,
  annotations: [{ type: 'issue', description: 'T-1' }, { type: 'slow' }],
  errors: [{ message: 'Error: no', stack: 'at x', location: { file: '/work/bundle/a.ts', line: 1, column: 2 } }],
  steps: [
    {
      title: 'Click',
      category: 'pw:api',
      startMs: 0,
      durationMs: 1,
      steps: [{ title: 'inner', category: 'expect', startMs: 0, durationMs: 0, steps: [], error: { message: 'x' } }],
    },
  ],
  attachments: [
    { name: 'trace', contentType: 'application/zip', automatic: true, path: '/work/output/trace.zip' },
    { name: 'big', contentType: 'text/plain', automatic: false, size: 9 },
  ],
  stdout: 'out',
  stderr: '',
};

const records: ReporterRecord[] = [
  {
    type: 'config',
    webServer: false,
    projects: [{ name: 'chromium', dependencies: ['setup'], browser: 'chromium' }],
    workers: null,
    rootDir: 'e2e',
  },
  { type: 'test', ...identity, tags: ['@smoke'], parallel: true },
  { type: 'begin', ...identity },
  attempt,
  { type: 'notRun', ...identity },
  { type: 'error', error: { message: 'SyntaxError: bad config' } },
  { type: 'end' },
];

/** A line as JSON of `record` with `changes` over it. */
const changed = (record: object, changes: Record<string, unknown>) => JSON.stringify({ ...record, ...changes });

describe('readLine', () => {
  it.each(records.map((record) => [record.type, record] as const))(
    'reads a %s record as the writer wrote it',
    (_, record) => {
      const line = recordLine(record);
      expect(line.endsWith('\n')).toBe(true);
      expect(readLine(line.trimEnd())).toEqual(record);
    },
  );

  it("reads the worker's own record of a line over the cap", () => {
    expect(readLine(JSON.stringify({ type: 'oversized', bytes: 5_000_000, head: '{"type":' }))).toEqual({
      type: 'oversized',
      bytes: 5_000_000,
      head: '{"type":',
    });
  });

  it.each([
    ['not JSON', '{"type":"end"'],
    ['a JSON string', '"end"'],
    ['an array', '[{"type":"end"}]'],
    ['null', 'null'],
    ['no type', '{"file":"a.spec.ts"}'],
    ['an unknown type', '{"type":"shell","command":"rm -rf /"}'],
    ['a type that is not a string', '{"type":["end"]}'],
    ['an inherited type name', '{"type":"toString"}'],
  ])('refuses %s', (_, text) => {
    expect(readLine(text)).toBeNull();
  });

  it.each([
    ['a status Playwright has not', { status: 'exploded' }],
    ['a title path of numbers', { titlePath: [1, 2] }],
    ['no file', { file: undefined }],
    ['a line that is not a number', { line: '3' }],
    ['errors that are not a list', { errors: 'Error: no' }],
    ['an error without a message', { errors: [{ stack: 'at x' }] }],
    ['a step of an unknown category', { steps: [{ ...attempt.steps[0], category: 'evil' }] }],
    ['a nested step without its steps', { steps: [{ ...attempt.steps[0], steps: [{ title: 'x' }] }] }],
    ['an attachment without a name', { attachments: [{ contentType: 'text/plain', automatic: false }] }],
    ['an annotation of no type', { annotations: [{ description: 'x' }] }],
    ['output that is not text', { stdout: { a: 1 } }],
    ['final as a string', { final: 'true' }],
    ['a duration as text', { durationMs: '12' }],
  ])('refuses an attempt with %s', (_, changes) => {
    expect(readLine(changed(attempt, changes))).toBeNull();
  });

  it('refuses other records of the wrong shape', () => {
    expect(readLine(changed(records[0] ?? {}, { projects: [{ name: 'x' }] }))).toBeNull();
    expect(readLine(changed(records[0] ?? {}, { workers: 'many' }))).toBeNull();
    expect(readLine(changed(records[1] ?? {}, { parallel: 1 }))).toBeNull();
    expect(readLine(JSON.stringify({ type: 'error', error: 'boom' }))).toBeNull();
    expect(readLine(JSON.stringify({ type: 'oversized', bytes: '1', head: '' }))).toBeNull();
  });

  it('refuses a line over the cap, valid JSON though it is', () => {
    const big = recordLine({ ...attempt, stdout: 'x'.repeat(MAX_LINE_BYTES) }).trimEnd();
    expect(readLine(big)).toBeNull();
    // Its bytes count, not its characters.
    const wide = recordLine({ ...attempt, stdout: '\u00e9'.repeat(MAX_LINE_BYTES / 2) }).trimEnd();
    expect(wide.length).toBeLessThan(MAX_LINE_BYTES);
    expect(readLine(wide)).toBeNull();
  });

  it('refuses steps nested deeper than the stack, without throwing', () => {
    const depth = 50_000;
    const open = '{"title":"s","category":"expect","startMs":0,"durationMs":0,"steps":[';
    const steps = '[' + open.repeat(depth) + ']}'.repeat(depth) + ']';
    const deep = changed(attempt, { steps: 'STEPS' }).replace('"STEPS"', steps);
    expect(Buffer.byteLength(deep)).toBeLessThan(MAX_LINE_BYTES);
    expect(readLine(deep)).toBeNull();
  });
});

describe('identityOfHead', () => {
  const head = (line: string, bytes: number) => line.slice(0, bytes);

  it("names the test of an attempt whose line was cut, the writer's identity coming first", () => {
    const line = recordLine({ ...attempt, stdout: 'x'.repeat(1_000) });
    expect(identityOfHead(head(line, 200))).toEqual({
      file: 'e2e/a.spec.ts',
      project: 'chromium',
      titlePath: ['cart', 'buys'],
    });
  });

  it('reads the members in whatever order they come', () => {
    const line = JSON.stringify({
      titlePath: ['t'],
      project: 'p',
      type: 'attempt',
      stdout: 'x'.repeat(100),
      file: 'f',
    });
    expect(identityOfHead(head(line, 80))).toBeNull();
    expect(identityOfHead(line)).toEqual({ file: 'f', project: 'p', titlePath: ['t'] });
  });

  it('reads titles holding quotes, escapes, commas and brackets', () => {
    const titlePath = ['a "quoted", {braced} [bracketed] title\\', 'é \u203a \n'];
    const line = recordLine({ ...attempt, titlePath });
    expect(identityOfHead(head(line, 300))?.titlePath).toEqual(titlePath);
  });

  it('is null when the head is cut inside the identity, or names no attempt', () => {
    const line = recordLine(attempt);
    expect(identityOfHead(head(line, line.indexOf('titlePath') + 20))).toBeNull();
    expect(identityOfHead(recordLine({ type: 'begin', ...identity }))).toBeNull();
    expect(identityOfHead('')).toBeNull();
    expect(identityOfHead('not json at all')).toBeNull();
    expect(identityOfHead('{"type":"attempt","file":1,"project":"p","titlePath":[]}')).toBeNull();
    expect(identityOfHead('{"type":"attempt" "file":"f"')).toBeNull();
  });
});

describe('interruptLine', () => {
  it('names a test by its file, project and title path, as the fixture computes it from its TestInfo', () => {
    expect(interruptLine({ file: 'a.spec.ts', project: 'chromium', titlePath: ['cart', 'buys'] })).toBe(
      '["a.spec.ts","chromium",["cart","buys"]]',
    );
  });
});
