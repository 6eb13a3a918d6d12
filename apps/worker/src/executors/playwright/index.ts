export { discoverTests, playwrightTestKey } from './runner/discover';
export { runPlaywrightTests } from './runner/invoke-tests';
export type * from './runner/types';
