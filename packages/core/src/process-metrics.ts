import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { Histogram as HistogramType, Registry } from 'prom-client';

/** One of prom-client's default collectors: registers its metrics in `registry`. */
type Collector = (registry: Registry, config: { eventLoopMonitoringPrecision: number }) => void;

/**
 * prom-client's default collectors (its `collectDefaultMetrics`) but its `gc` one, which starts a
 * process-wide PerformanceObserver it never disconnects. Each is a module of its own.
 */
const PROM_CLIENT_COLLECTORS = [
  'processCpuTotal',
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  'eventLoopLag',
  ...(typeof process.getActiveResourcesInfo === 'function' ? ['processResources'] : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
];

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** The GC observers started by this module and not yet stopped. */
const observing = new Set<PerformanceObserver>();

/**
 * Registers the default process metrics (`process_*`, `nodejs_*`: CPU, memory, file descriptors,
 * event-loop lag, heap, GC), the same series as prom-client's `collectDefaultMetrics`, in
 * `registry`. The GC observer they start stays until {@link stopProcessMetrics}: the process keeps
 * every observer, and all its callback reaches, until it is disconnected.
 */
export function collectProcessMetrics(registry: Registry): void {
  const config = { eventLoopMonitoringPrecision: 10 };
  for (const name of PROM_CLIENT_COLLECTORS) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- not exported one by one
    (require(`prom-client/lib/metrics/${name}`) as Collector)(registry, config);
  }
  // Loaded here rather than on import: the tests' teardown imports this module after every file.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Histogram } = require('prom-client') as { Histogram: typeof HistogramType };
  const gcDuration = new Histogram({
    name: 'nodejs_gc_duration_seconds',
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'] as const,
    enableExemplars: false,
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
    registers: [registry],
  });
  const observer = new PerformanceObserver((list) => {
    const entry = list.getEntries()[0] as { duration: number; detail?: { kind?: number } } | undefined;
    if (entry) gcDuration.observe({ kind: GC_KINDS[entry.detail?.kind ?? -1] }, entry.duration / 1000);
  });
  observer.observe({ entryTypes: ['gc'] });
  observing.add(observer);
}

/**
 * Disconnects every GC observer {@link collectProcessMetrics} started (their histograms stop
 * counting). For a process that loads this module many times over, each in a context of its own
 * (jest loads every test file's modules afresh): an observer left connected keeps its callback's
 * whole context, that is the file's entire module graph, alive until the process exits.
 */
export function stopProcessMetrics(): void {
  for (const observer of observing) observer.disconnect();
  observing.clear();
}
