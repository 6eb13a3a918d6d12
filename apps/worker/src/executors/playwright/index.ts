export { discoverTests, playwrightTestKey } from './discover';
export type * from './types';
