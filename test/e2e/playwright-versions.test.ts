import { checkPinnedVersion } from './playwright-versions';

// A repository pinned to 1.39 runs on 1.39, its tests selected exactly, in the sandbox.
jest.setTimeout(240_000);

checkPinnedVersion({ WORKER_CONCURRENCY: '2' });
