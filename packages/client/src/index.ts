export * from './aggregate';
export * from './backoff';
export * from './bundles';
export * from './errors';
export * from './testrun-client';
export type * from './options';
