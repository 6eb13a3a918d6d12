// Visual comparison's data access (docs/VISUAL.md): the baselines a run compares against, what runs
// found of their snapshots, and the approval of it.
export * from './approve';
export * from './baselines';
export * from './image-collection';
