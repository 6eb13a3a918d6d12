import { stepBaselinePath } from '@testrun/core/visual';
import { newBaselinesSummary as playwrightSummary, pathInBundle } from '../playwright/runner/snapshots';
import { newBaselinesSummary, RunBaselines, type RunBaselinesIo } from './run-baselines';

// Step tests' baselines beside the Playwright snapshots of the same deployments (docs/VISUAL.md,
// "Step tests"): the same words in a run's summary, and paths that never meet.

it("sums up a passing run's new baselines in the Playwright executor's words", () => {
  for (const names of [
    ['home.png'],
    ['home.png', 'cart.png'],
    ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => `${n}.png`),
  ])
    expect(newBaselinesSummary(names)).toBe(playwrightSummary(names));
  expect(newBaselinesSummary(['home.png', 'cart.png'])).toBe(
    'Passed; new baselines awaiting approval: home.png, cart.png',
  );
});

it("keeps a step test's baseline where no Playwright snapshot is, and where none is ever placed in a bundle", () => {
  const bundle = '/tmp/scratch/bundle';
  const path = stepBaselinePath({ suiteSlug: 'steps', testKey: 'home' }, 'home');
  expect(pathInBundle(bundle, path)).toBeNull();
  // What a bundle's own `steps/` folder would hold is a Playwright path, and a different one.
  expect(pathInBundle(bundle, 'steps/steps/home/home.png')).toBe('steps/steps/home/home.png');
  expect(path).toBe('/steps/steps/home/home.png');
});

/** An attempt's baselines over a database and a store that answer from memory, and what they were asked. */
function baselinesOver(options: {
  deploymentId?: string | null;
  stored?: Record<string, Buffer>;
  maxAttachments?: number;
}) {
  const queries: string[] = [];
  const writes: unknown[][] = [];
  const stored = new Map(Object.entries(options.stored ?? {}).map(([path, body]) => [`baselines/ws/${path}`, body]));
  const files = [...stored.keys()].map((key) => ({
    path: key.slice('baselines/ws/'.length),
    sha256: 'f'.repeat(64),
    storageKey: key,
    sizeBytes: 1,
  }));
  const tx = {
    $executeRaw: (_: TemplateStringsArray, ...values: unknown[]) => {
      writes.push(values);
      return Promise.resolve(1);
    },
  };
  const db = {
    $queryRaw: (strings: TemplateStringsArray) => {
      const sql = strings.join('?');
      queries.push(sql);
      if (sql.includes('JOIN suites'))
        return Promise.resolve([
          {
            deploymentId: options.deploymentId === undefined ? 'dep_1' : options.deploymentId,
            suiteSlug: 'pages',
            testKey: 'home',
          },
        ]);
      return Promise.resolve([
        ...files,
        { path: 'e2e/home.spec.ts-snapshots/home.png', sha256: 'e'.repeat(64), storageKey: 'x', sizeBytes: 1 },
      ]);
    },
    $transaction: (work: (t: typeof tx) => Promise<unknown>) => work(tx),
    // A key noted for the collection of images before its put (storeBaselineImage).
    $executeRaw: (_: TemplateStringsArray, key: unknown) => {
      noted.push(String(key));
      return Promise.resolve(1);
    },
  };
  const noted: string[] = [];
  const store = {
    get: (key: string) => Promise.resolve(stored.get(key) ?? null),
    put: (key: string, body: Buffer) => {
      if (!noted.includes(key)) throw new Error(`${key} stored before it was noted`);
      stored.set(key, body);
      return Promise.resolve();
    },
  };
  const attached: string[] = [];
  const baselines = new RunBaselines({
    db: db as unknown as RunBaselinesIo['db'],
    store: store as unknown as RunBaselinesIo['store'],
    run: { id: 'run_1', workspaceId: 'ws' },
    writer: { recordRunFile: (_kind, name) => attached.push(name) },
    retry: (call) => call(),
    limits: { maxAttachments: options.maxAttachments ?? 50, maxRecordingBytes: 1024 * 1024 },
  });
  return { baselines, queries, writes, attached, stored };
}

const passed = { status: 'passed', resultSummary: 'Passed: 3 steps in 1 s.' } as const;

it("reads the run's baselines once, at the first screenshot, its own test's only", async () => {
  const image = Buffer.from('teal');
  const { baselines, queries } = baselinesOver({ stored: { '/steps/pages/home/page.png': image } });
  expect(queries).toEqual([]);
  expect(await baselines.baseline('page')).toEqual({
    name: 'page.png',
    path: '/steps/pages/home/page.png',
    expected: image,
  });
  expect(await baselines.baseline('hero')).toEqual({
    name: 'hero.png',
    path: '/steps/pages/home/hero.png',
    expected: null,
  });
  expect(queries).toHaveLength(2);
  // A Playwright snapshot of the same deployment is not a step test's, whatever its name.
  expect((await baselines.baseline('home')).expected).toBeNull();
});

it('keeps nothing, and writes nothing, when every screenshot matched', async () => {
  const { baselines, writes, attached } = baselinesOver({});
  await baselines.baseline('page');
  expect(await baselines.finish(passed)).toEqual(passed);
  expect([writes, attached]).toEqual([[], []]);
});

it('keeps a new baseline and a change when the attempt ends: images by hash, one transaction, the summary', async () => {
  const before = Buffer.from('teal');
  const { baselines, writes, attached, stored } = baselinesOver({ stored: { '/steps/pages/home/hero.png': before } });
  const page = await baselines.baseline('page');
  baselines.keepNew(page, Buffer.from('page'));
  // The same name again compares with the image the attempt took.
  expect((await baselines.baseline('page')).expected).toEqual(Buffer.from('page'));
  const hero = await baselines.baseline('hero');
  baselines.keepChanged(hero, { actual: Buffer.from('crimson'), diff: Buffer.from('diff') });
  expect(attached).toEqual(['page-actual.png', 'hero-expected.png', 'hero-actual.png', 'hero-diff.png']);
  expect(writes).toEqual([]);
  expect(await baselines.finish(passed)).toEqual({
    ...passed,
    resultSummary: 'Passed; new baseline awaiting approval: page.png',
  });
  // The new one: its visual change and its baseline; the changed one: its visual change only.
  expect(writes.map((w) => w.filter((v) => v === 'new' || v === 'changed'))).toEqual([['new'], [], ['changed']]);
  expect([...stored.values()].map(String).sort()).toEqual(['crimson', 'page', 'teal']);
  const failed = {
    status: 'failed',
    code: 'screenshot_changed',
    message: 'm',
    resultSummary: 'Screenshot changed',
  } as const;
  expect(await baselinesOver({}).baselines.finish(failed)).toEqual(failed);
});

it("keeps a screenshot's first image when it then differs from it, and the images within the run's limits", async () => {
  const { baselines, attached, writes } = baselinesOver({ maxAttachments: 2 });
  const page = await baselines.baseline('page');
  baselines.keepNew(page, Buffer.from('first'));
  baselines.keepChanged(await baselines.baseline('page'), { actual: Buffer.from('second'), diff: Buffer.from('d') });
  expect(attached).toEqual(['page-actual.png', 'page-expected.png']);
  const failed = {
    status: 'failed',
    code: 'screenshot_changed',
    message: 'm',
    resultSummary: 'Screenshot changed.',
  } as const;
  expect((await baselines.finish(failed)).resultSummary).toBe(
    "Screenshot changed. Images not kept (over the run's 2 files or 1 MB of images): page-actual.png, page-diff.png.",
  );
  expect(writes.map((w) => w.filter((v) => v === 'new' || v === 'changed'))).toEqual([['new'], []]);
});

it('refuses to compare in a run of no deployment, saying why', async () => {
  await expect(baselinesOver({ deploymentId: null }).baselines.baseline('page')).rejects.toMatchObject({
    problem: {
      outcome: 'error',
      code: 'invalid_definition',
      message: expect.stringContaining('this run executes none') as string,
    },
  });
});
