// The data access of `runs` (and of their suite runs): every statement of core that reads or writes
// the table, its column lists and row shapes (docs/ARCHITECTURE.md, "Core and the runs data access").
export * from './state';
export type { ArtifactRow } from './artifacts';
export * from './retry';
export * from './claim';
export * from './holds';
export * from './deadline';
export * from './create';
export * from './reads';
export * from './cancel';
export { fairPositions, positionsAfter } from './fair-queue';
export * from './suite-run-copy';
export * from './listing';
export * from './rerun';
export * from './counts';
export * from './batch';
export { batchWorkers } from './batch-plan';
export * from './step-rows';
export * from './setup-results';
export * from './request-tests';
export * from './setup-artifacts';
