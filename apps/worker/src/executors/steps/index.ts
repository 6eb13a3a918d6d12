export { describeStep, describeTarget, summarizeFailure, type StepOutcomeResult } from './execute-step';
