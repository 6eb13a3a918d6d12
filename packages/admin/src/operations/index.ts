// Operator actions behind `testrun admin` that talk to Postgres directly: workspaces, members, keys,
// project files, secret variables and webhook endpoints. Tests and benchmarks set up their
// workspaces through them too.
export * from './admin-error';
export * from './workspaces';
export * from './secrets';
export * from './webhooks';
