export { discoverTests, playwrightTestKey } from './discover';
export { runPlaywrightTests } from './run';
export type * from './types';
