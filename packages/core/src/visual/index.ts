// Visual comparison's data access (docs/VISUAL.md): the baselines a run compares against, what runs
// found of their snapshots, their approval, and the links that approve in the view.
export * from './approve';
export * from './baselines';
export * from './step-baselines';
export * from './approval-links';
export * from './image-collection';
