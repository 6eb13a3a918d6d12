import { checkPinnedVersion } from './playwright-versions';

// The same without a sandbox (PLAYWRIGHT_SANDBOX=off, docs/SANDBOX.md "Opting out"): the run's
// node_modules holds the pinned version, and the service's stand-in resolves it, not the worker's own.
jest.setTimeout(240_000);

checkPinnedVersion({ WORKER_CONCURRENCY: '2', PLAYWRIGHT_SANDBOX: 'off' });
