export { readWorkerConfig, type WorkerConfig } from './config';
export {
  executeRun,
  findDefinitionProblem,
  MAX_RUN_ATTEMPTS,
  workerLostOutcome,
  type ContextSource,
  type RunDeps,
  type RunExecution,
  type RunTimings,
} from './execute-run';
export { createRunWorker, type RunWorkerOptions } from './run-worker';
export { Reconciler, RECONCILER_LOCK_KEY, type ReconcileReport, type ReconcilerOptions } from './reconciler';
export { startWorkerService, type WorkerService, type WorkerServiceOptions } from './worker-service';
export { sanitizeTrace, REDACTED } from './trace-sanitizer';
export { routeTargetHeaders } from './target-headers';
export { isVideoAvailable, playwrightFfmpegPath } from './video';
export { BrowserPool } from './browser/browser-pool';
