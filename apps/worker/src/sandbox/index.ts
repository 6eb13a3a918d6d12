export { DEFAULT_PLAYWRIGHT_SANDBOX_LIMITS, limitsForWorkers } from './limits';
export { groupLimitNow, runSandboxed, type SandboxLimits, type SandboxResult, type SandboxSpec } from './run-sandboxed';
export { listScratchDir, openScratchFile, readScratchFile, ScratchPathError } from './beneath';
export { mountScratch, scratchFullNow, sweepStaleScratch, unmountScratch } from './scratch';
export { releaseShare, shareCopy, shareFolder } from './share';
export { checkSandboxSupport } from './support';
export { runUnsandboxed } from './unsandboxed';
