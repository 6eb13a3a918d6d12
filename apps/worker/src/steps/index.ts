export {
  executeStep,
  captureScreenshot,
  describeStep,
  describeTarget,
  summarizeFailure,
  summarizePass,
  type StepOutcomeResult,
} from './execute-step';
