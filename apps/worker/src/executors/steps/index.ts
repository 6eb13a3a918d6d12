export { stepsExecutor } from './steps-executor';
export type { ContextSource, StepsExecutorDeps } from './steps-attempt';
