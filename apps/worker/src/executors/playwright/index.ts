export { discoverTests, playwrightTestKey } from './discover';
export { runPlaywrightTests } from './run';
export { PLAYWRIGHT_LIMITS } from './runtime';
export type * from './types';
