// A project's test definitions: deployments (every version of its project file, one active), their
// activation onto the live suites and tests, and the webhook endpoints a project file manages.
export * from './errors';
export * from './apply';
export * from './deploy';
export * from './reads';
export * from './runnable';
export {
  expandPlaywrightSuites,
  matchesBundleGlob,
  playwrightSection,
  type Expanded,
  type ExpandedFile,
} from './playwright';
export { importBaselines, platformWarning, withImportedBaselines } from './import-baselines';
export { readBundleTexts } from './sources';
export { checkEndpointUrl, newWebhookSecret, syncProjectWebhooks, type AppliedWebhook } from './webhooks';
