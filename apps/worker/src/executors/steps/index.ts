export {
  executeStep,
  timelineShot,
  describeStep,
  describeTarget,
  summarizeFailure,
  summarizePass,
  type StepOutcomeResult,
} from './execute-step';
