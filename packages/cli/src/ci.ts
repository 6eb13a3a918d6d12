// What the GitHub Action shares with `testrun run`, so both derive the same idempotency key, parse
// headers and durations alike, follow a wait the same way, and write the same report and JUnit.
// Bundled into the action from source (the `@testrun/source` condition); not part of the published
// package.
export { deriveCiIdempotencyKey } from './client/ci-idempotency';
export { buildJunitXml } from './client/junit';
export {
  parseDuration,
  parseHeaders,
  parseRetries,
  parseWorkers,
  redact,
  secretsOf,
  UsageError,
} from './client/parse-options';
export { addDetails, exitCodeFor, flakyCount, verdictLine } from './client/report';
export { enqueuedIds, replayedNote, WaitProgress, type WaitProgressView } from './client/wait-progress';
export { changedScreenshots, newBaselinesHint } from './client/visual-notes';
export { deploySource, isProjectFileRefusal } from './client/deploy-source';
export {
  formatProjectFileError,
  locateErrors,
  readProjectSource,
  type ProjectFileError,
  type ProjectSource,
} from './client/project-source';
