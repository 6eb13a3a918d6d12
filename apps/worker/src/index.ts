export { readWorkerConfig, type WorkerConfig } from './config';
export { executeRun, workerRunDeps, type ExecutorParts, type RunDepsInput } from './executors';
export type { ContextSource } from './executors/steps';
export type { RunDeps, RunExecution, RunTimings } from './run/run-deps';
export type { Executor, ExecutorAttempt, ExecutorRun, Executors, PreparedRun } from './run/executor';
export { checkDefinition, MAX_RUN_ATTEMPTS, workerLostOutcome } from './run/run-outcomes';
export { createRunWorker, type RunWorkerOptions } from './service/run-worker';
export { RunHolds } from './run/run-holds';
export {
  Reconciler,
  RECONCILER_LOCK_KEY,
  type ReconcileReport,
  type ReconcilerOptions,
} from './housekeeping/reconciler';
export {
  purgeExpired,
  type RetentionDays,
  type RetentionOptions,
  type RetentionReport,
} from './housekeeping/retention';
export { startWorkerService, type WorkerService, type WorkerServiceOptions } from './service/worker-service';
export { sanitizeTrace, REDACTED } from './run/trace-sanitizer';
export { routeTargetHeaders } from './network/target-headers';
export { isVideoAvailable, playwrightFfmpegPath } from './run/video';
export { BrowserPool, CHROMIUM_ARGS } from './browser/browser-pool';
export { EgressProxy, egressProxyLaunchArgs } from './network/egress-proxy';
