import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { collectProcessMetrics, stopProcessMetrics } from './process-metrics';

afterEach(() => {
  stopProcessMetrics();
});

/** The series' names, types and help lines of a registry. */
async function headers(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith('#'));
}

test("the same series as prom-client's default metrics", async () => {
  const theirs = new Registry();
  collectDefaultMetrics({ register: theirs });
  const ours = new Registry();
  collectProcessMetrics(ours);
  expect(await headers(ours)).toEqual(await headers(theirs));
});

/** The GC histogram of a registry of its own, held weakly once the registry is dropped. */
function gcHistogramOfADroppedRegistry(): WeakRef<object> {
  const registry = new Registry();
  collectProcessMetrics(registry);
  return new WeakRef(registry.getSingleMetric('nodejs_gc_duration_seconds') as object);
}

/** Runs a full GC, a turn after the current one (a WeakRef deref'd in this turn holds its target). */
async function collectGarbage(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

test('stopping lets go of what the GC observer reached', async () => {
  const kept = gcHistogramOfADroppedRegistry();
  await collectGarbage();
  expect(kept.deref()).toBeDefined();
  stopProcessMetrics();
  await collectGarbage();
  expect(kept.deref()).toBeUndefined();
});
