export {
  executeStep,
  captureScreenshot,
  describeStep,
  describeTarget,
  summarizeFailure,
  summarizePass,
  type CaptureScreenshotOptions,
  type StepContext,
  type StepEffect,
  type StepOutcomeResult,
  type StepProblem,
  type SummarizableResult,
} from './execute-step';
export { ACTIONS, type ActionTable, type StepActionFn } from './actions';
export type { ActionContext, ScreenshotEffect, StepErrorCode } from './types';
