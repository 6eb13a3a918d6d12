// The keys derived from TESTRUN_SECRET and what is sealed or signed with them: request headers, run
// variables, stored secret variables (sealing, and their data access: stored.ts), view tokens.
export * from './seal';
export * from './variables';
export * from './stored';
