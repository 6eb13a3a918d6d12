export { runSandboxed, type SandboxLimits, type SandboxResult, type SandboxSpec } from './run-sandboxed';
export { checkSandboxSupport } from './support';
