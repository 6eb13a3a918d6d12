export { stepsExecutor } from './steps-executor';
