import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from '../support/processes';

/** The parts of action.yml the runner reads. */
export interface ActionYml {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string; post?: string; 'post-if'?: string };
}

export function readActionYml(): ActionYml {
  return parse(readFileSync(path.join(REPO_ROOT, 'action.yml'), 'utf8')) as ActionYml;
}

/** What one step left behind, as the runner would read it. */
export interface StepResult {
  code: number | null;
  /** stdout and stderr in order: the job log before the runner applies the masks. */
  log: string;
  outputs: Record<string, string>;
  summary: string;
  /** What the step saved for its post step (`core.saveState`). */
  state: Record<string, string>;
  /** Every file the step wrote for the runner, for searches of secrets. */
  files: string;
}

/** The runner's file commands: `name<<DELIMITER`, the value's lines, `DELIMITER`. */
function readFileCommands(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [, name = '', _delimiter, value = ''] of readFileSync(file, 'utf8').matchAll(
    /^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm,
  ))
    values[name] = value;
  return values;
}

/** Variables the jest process may have (it may itself run in CI) that would change what the action does. */
const INHERITED = /^(INPUT_|STATE_|GITHUB_|RUNNER_|CI$|TESTRUN_)/;

/**
 * Runs the committed bundle with plain node, as the runner starts a `node24` action: each input as
 * `INPUT_<NAME>` (its default from action.yml when not given), `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`
 * and `GITHUB_STATE` files, and for the post step the main step's state as `STATE_<name>`.
 */
export async function runActionStep(
  inputs: Record<string, string>,
  options: { env?: Record<string, string>; state?: Record<string, string>; post?: boolean } = {},
): Promise<StepResult> {
  const action = readActionYml();
  const entry = options.post ? action.runs.post : action.runs.main;
  if (entry === undefined) throw new Error('action.yml names no entry point for this step');
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-action-'));
  const files = { GITHUB_OUTPUT: 'output', GITHUB_STEP_SUMMARY: 'summary.md', GITHUB_STATE: 'state' };
  const fileEnv: Record<string, string> = {};
  for (const [variable, name] of Object.entries(files)) {
    fileEnv[variable] = path.join(work, name);
    writeFileSync(path.join(work, name), '');
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !INHERITED.test(name)) env[name] = value;
  for (const [name, def] of Object.entries(action.inputs))
    env[`INPUT_${name.replace(/ /g, '_').toUpperCase()}`] = inputs[name] ?? def.default ?? '';
  for (const [name, value] of Object.entries(options.state ?? {})) env[`STATE_${name}`] = value;
  Object.assign(env, { GITHUB_ACTIONS: 'true', RUNNER_TEMP: work }, fileEnv, options.env);

  // Asynchronous: the fixture site lives in this process and must keep answering.
  const { code, log } = await new Promise<{ code: number | null; log: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, entry)], {
      cwd: work,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ code: status, log: out }));
  });
  const read = (variable: keyof typeof files) => readFileSync(fileEnv[variable] ?? '', 'utf8');
  return {
    code,
    log,
    outputs: readFileCommands(fileEnv.GITHUB_OUTPUT ?? ''),
    summary: read('GITHUB_STEP_SUMMARY'),
    state: readFileCommands(fileEnv.GITHUB_STATE ?? ''),
    files: [read('GITHUB_OUTPUT'), read('GITHUB_STEP_SUMMARY'), read('GITHUB_STATE')].join('\n'),
  };
}
