import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The size limits `pnpm lint` checks (eslint.config.mjs, docs/ARCHITECTURE.md "Size limits"): the
 * configuration's size block reports a file over 300 lines and a function over 80 in a small tree
 * of fixture files, accepts them with a disable comment, and fails a disable comment that no
 * longer silences anything; and every such disable comment in the real tree says why.
 */

const ROOT = path.resolve(__dirname, '../..');
const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');
const SOURCE_DIRS = ['apps', 'packages'];

type Message = { ruleId: string | null; severity: number; message: string };
type FileResult = { filePath: string; messages: Message[] };

/** Runs the ESLint CLI in `cwd`; it exits 1 when it finds errors, which is no failure here. */
function eslint(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [ESLINT, ...args], { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, out, err) => {
      if (error && error.code !== 1) reject(new Error(`eslint failed: ${error.message}\n${err}`));
      else resolve(out);
    });
  });
}

/** `count` lines of statements. */
const statements = (count: number, indent = '') =>
  Array.from({ length: count }, (_, i) => `${indent}console.log(${i});`).join('\n');
/** A function `lines` lines long, its first and last line included. */
const fn = (name: string, lines: number) => `export function ${name}(): void {\n${statements(lines - 2, '  ')}\n}\n`;

/**
 * The size-limit exceptions in `text` that give no reason: `eslint-disable` comments (any form)
 * naming `max-lines` or `max-lines-per-function` without a ` -- reason`.
 */
function unreasonedSizeExceptions(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/eslint-disable(?:-next-line|-line)?\b([^\n]*?)(?:\*\/|$)/gm)) {
    const [rules = '', reason] = (match[1] ?? '').split(/\s--\s/);
    const named = rules.split(',').map((r) => r.trim());
    const sizeRule = named.some((r) => r === 'max-lines' || r === 'max-lines-per-function');
    if (sizeRule && !reason?.trim()) found.push(match[0].trim());
  }
  return found;
}

/** The TypeScript sources below `dir`, as paths relative to the repository. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
    .filter((file) => !file.split(path.sep).some((part) => ['node_modules', 'dist', 'generated'].includes(part)));
}

describe('the size rules on a tree of fixture files', () => {
  let dir: string;
  let results: Map<string, Message[]>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'testrun-size-'));
    // The repository's own size block and linter options, on files parsed as TypeScript without types.
    const config = `import config from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'eslint.config.mjs')).href)};
import tseslint from 'typescript-eslint';
const size = config.filter((c) => c.linterOptions !== undefined || (c.rules !== undefined && 'max-lines' in c.rules));
export default [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...size];
`;
    const files: Record<string, string> = {
      'eslint.config.mjs': config,
      'packages/demo/src/long-file.ts': statements(301) + '\n',
      'packages/demo/src/at-limits.ts': `${fn('atLimit', 80)}${statements(300 - 80)}\n`,
      'apps/demo/src/long-function.ts': fn('longFunction', 81),
      'apps/demo/src/excused-function.ts': `// eslint-disable-next-line max-lines-per-function -- one table, read top to bottom\n${fn('excused', 81)}`,
      'apps/demo/src/excused-file.ts': `/* eslint-disable max-lines -- one generated-like table */\n${statements(310)}\n`,
      'apps/demo/src/stale-exception.ts': `// eslint-disable-next-line max-lines-per-function -- it was long once\n${fn('short', 5)}`,
      // Tests have no size limit.
      'packages/demo/src/long-file.test.ts': statements(400) + '\n',
    };
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
    await symlink(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    const out = await eslint(dir, ['--format', 'json', 'apps', 'packages']);
    results = new Map(
      (JSON.parse(out) as FileResult[]).map((r) => [path.relative(dir, r.filePath), r.messages] as const),
    );
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The rule (or `unused-directive`) of each error ESLint reported in `file`. */
  const errors = (file: string) =>
    (results.get(file) ?? []).filter((m) => m.severity === 2).map((m) => m.ruleId ?? 'unused-directive');

  test('a file over 300 lines and a function over 80 are reported; at the limits is fine', () => {
    expect(errors('packages/demo/src/long-file.ts')).toEqual(['max-lines']);
    expect(errors('apps/demo/src/long-function.ts')).toEqual(['max-lines-per-function']);
    expect(errors('packages/demo/src/at-limits.ts')).toEqual([]);
    expect(errors('packages/demo/src/long-file.test.ts')).toEqual([]);
  });

  test('an exception with its reason is accepted, and one that silences nothing fails', () => {
    expect(errors('apps/demo/src/excused-function.ts')).toEqual([]);
    expect(errors('apps/demo/src/excused-file.ts')).toEqual([]);
    expect(errors('apps/demo/src/stale-exception.ts')).toEqual(['unused-directive']);
  });
});

test('an exception without a reason is found', () => {
  expect(
    unreasonedSizeExceptions(
      [
        '// eslint-disable-next-line max-lines-per-function',
        '/* eslint-disable max-lines */',
        '/* eslint-disable max-lines, no-console -- */',
        '// eslint-disable-next-line max-lines-per-function -- the steps read in order',
        '/* eslint-disable max-lines -- one table */',
        '// eslint-disable-next-line no-console',
      ].join('\n'),
    ),
  ).toEqual([
    'eslint-disable-next-line max-lines-per-function',
    'eslint-disable max-lines */',
    'eslint-disable max-lines, no-console -- */',
  ]);
});

test('every size exception in apps/ and packages/ says why', async () => {
  const files = (await Promise.all(SOURCE_DIRS.map(sources))).flat();
  expect(files.length).toBeGreaterThan(100);
  const unreasoned: string[] = [];
  for (const file of files) {
    for (const comment of unreasonedSizeExceptions(await readFile(path.join(ROOT, file), 'utf8')))
      unreasoned.push(`${file}: ${comment}`);
  }
  expect(unreasoned).toEqual([]);
});

test("the real configuration applies the limits to a package's sources, not to its tests", async () => {
  const rules = async (file: string) =>
    (JSON.parse(await eslint(ROOT, ['--print-config', file])) as { rules: Record<string, unknown> }).rules;
  const source = await rules('packages/client/src/testrun-client.ts');
  expect(source['max-lines']).toEqual([2, { max: 300, skipBlankLines: false, skipComments: false }]);
  expect(source['max-lines-per-function']).toEqual([
    2,
    { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true },
  ]);
  const testFile = await rules('packages/client/src/testrun-client.test.ts');
  expect(testFile['max-lines']).toBeUndefined();
}, 60_000);
