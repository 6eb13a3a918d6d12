import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './cli-harness';

type Step = {
  name: string;
  id?: string;
  if?: string;
  shell: string;
  env?: Record<string, string>;
  run: string;
  'working-directory'?: string;
};
export type ActionYml = {
  inputs: Record<string, { default?: string; required?: boolean }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};

export function readActionYml(): ActionYml {
  return parse(readFileSync(path.join(ROOT, 'action.yml'), 'utf8')) as ActionYml;
}

export interface ActionRun {
  /** Everything the steps printed, in order (what the job log would show before masking). */
  log: string;
  outputs: Record<string, string>;
  summary: string;
  /** Exit code of the first failing step, or 0. */
  failedWith: number;
}

/**
 * Runs the composite action's bash steps the way the runner does: `${{ … }}` expressions evaluated
 * from inputs, step outputs and a few contexts, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files, a step
 * after a failure only when `if: always()`. The install step is skipped: this checkout is installed.
 */
export async function runAction(inputs: Record<string, string>, env: Record<string, string>): Promise<ActionRun> {
  const action = readActionYml();
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-action-'));
  const values: Record<string, string> = {};
  for (const [name, def] of Object.entries(action.inputs)) values[name] = inputs[name] ?? def.default ?? '';
  const stepOutputs: Record<string, Record<string, string>> = {};
  const summaryFile = path.join(work, 'summary.md');
  writeFileSync(summaryFile, '');
  const contexts: Record<string, string> = {
    'runner.temp': work,
    'github.run_id': '4242',
    'github.action': '__acme_testrun',
    'github.action_path': ROOT,
  };
  const evaluate = (text: string) =>
    text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
      if (expr.startsWith('inputs.')) return values[expr.slice(7)] ?? '';
      const [, stepId, output] = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expr) ?? [];
      if (stepId !== undefined && output !== undefined) return stepOutputs[stepId]?.[output] ?? '';
      const context = contexts[expr];
      if (context !== undefined) return context;
      throw new Error(`expression not supported by the test runner: ${expr}`);
    });
  let log = '';
  let failedWith = 0;
  for (const step of action.runs.steps) {
    if (step.name.startsWith('Install')) continue;
    if (failedWith !== 0 && step.if !== 'always()') continue;
    const outFile = path.join(work, `out-${step.id ?? 'x'}`);
    writeFileSync(outFile, '');
    const stepEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = evaluate(v);
    // Asynchronous: the fixture site lives in this process and must keep answering.
    const res = await new Promise<{ status: number | null; output: string }>((resolve, reject) => {
      const child = spawn('bash', ['-e', '-c', step.run], {
        cwd: ROOT,
        env: {
          ...process.env,
          ...env,
          ...stepEnv,
          GITHUB_ACTIONS: 'true',
          GITHUB_OUTPUT: outFile,
          GITHUB_STEP_SUMMARY: summaryFile,
          GITHUB_ACTION_PATH: ROOT,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, output }));
    });
    log += res.output;
    if (step.id) {
      stepOutputs[step.id] = Object.fromEntries(
        readFileSync(outFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
    }
    if (res.status !== 0 && failedWith === 0) failedWith = res.status ?? 1;
  }
  const outputs: Record<string, string> = {};
  for (const [name, def] of Object.entries(action.outputs)) outputs[name] = evaluate(def.value);
  return { log, outputs, summary: readFileSync(summaryFile, 'utf8'), failedWith };
}
