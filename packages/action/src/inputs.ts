import * as core from '@actions/core';
import {
  deriveCiIdempotencyKey,
  parseDuration,
  parseHeaders,
  parseRetries,
  parseWorkers,
  secretsOf,
  UsageError,
} from '@testrun/cli/ci';
import {
  checkBaseUrl,
  EVIDENCE_MODES,
  IDEMPOTENCY_KEY_RULE,
  isIdempotencyKey,
  type EvidenceMode,
  type RunCreateRequest,
} from '@testrun/contracts';

/** What the step enqueues: one test, one suite of a project, or every suite of a project. */
type Target = { kind: 'test'; testId: string } | { kind: 'suite' | 'project'; project: string; suite: string | null };

/** The inputs of action.yml, checked: everything the step needs before its first request. */
export interface ActionInputs {
  apiUrl: string;
  apiKey: string;
  target: Target;
  request: RunCreateRequest;
  /** `file`: a project file to deploy before the run (its slug is the project), or null. */
  file: string | null;
  /** `deploy: true`: the file's deployment is activated; else it is a preview that only this step runs. */
  deploy: boolean;
  /** `Idempotency-Key` of the enqueue: the input, else derived from the workflow run, else random. */
  idempotencyKey: string | undefined;
  /** The same for a request completed later (with `file`: once the preview's deploymentId is known). */
  idempotencyKeyFor: (request: RunCreateRequest) => string | undefined;
  timeoutMs: number;
  pollIntervalMs: number;
  junit: string | null;
  failOn: 'not-passed' | 'never';
  /** Every string that must not reach a log or a file: the key, header values and their credentials. */
  secrets: string[];
}

/**
 * Reads and checks the inputs. The API key and every header value are masked (`::add-mask::`)
 * before anything else is read, so no later message, even a refusal, can show them. Problems are
 * {@link UsageError}s naming the input, never its value.
 */
export function readInputs(env: NodeJS.ProcessEnv): ActionInputs {
  const apiKey = core.getInput('api-key', { required: true });
  core.setSecret(apiKey);
  const lines = headerLines(core.getInput('headers'));
  // Masked as written, before parsing: even a line that parsing refuses never reaches the log.
  // Every whole value, however short, and the credentials of a `Scheme credentials` value.
  const values = lines.map((line) => line.slice(line.indexOf(':') + 1).trim()).filter((v) => v !== '');
  const secrets = secretsOf([apiKey, ...values]);
  for (const value of new Set([...values, ...secrets])) if (value !== apiKey) core.setSecret(value);
  const headers = parseHeaders(lines);

  const apiUrl = core.getInput('api-url', { required: true });
  if (!/^https?:\/\/[^/]/.test(apiUrl))
    throw new UsageError(`api-url must be an absolute http(s) URL (got "${apiUrl}")`);
  const file = core.getInput('file');
  const target = readTarget(file);
  const deploy = readDeploy(file);
  const request: RunCreateRequest =
    target.kind === 'test'
      ? { testId: target.testId }
      : { projectSlug: target.project, ...(target.suite === null ? {} : { suiteSlug: target.suite }) };
  const baseUrl = core.getInput('base-url');
  if (baseUrl !== '') {
    const problem = checkBaseUrl(baseUrl);
    if (problem) throw new UsageError(`base-url ${problem} (got "${baseUrl}")`);
    request.baseUrl = baseUrl;
  }
  if (Object.keys(headers).length > 0) request.headers = headers;
  const evidence = {
    ...evidenceInput('trace'),
    ...evidenceInput('video'),
    ...evidenceInput('screenshots'),
  };
  if (Object.keys(evidence).length > 0) request.evidence = evidence;
  const retries = core.getInput('retries');
  if (retries !== '') request.retries = parseRetries(retries, 'retries');
  const workers = core.getInput('workers');
  if (workers !== '') request.workers = parseWorkers(workers, 'workers');

  const timeoutMs = parseDuration(core.getInput('timeout') || '15m', 'timeout');
  if (timeoutMs <= 0) throw new UsageError('timeout must be greater than zero');
  const pollIntervalMs = parseDuration(core.getInput('poll-interval') || '3s', 'poll-interval');
  if (pollIntervalMs < 100) throw new UsageError('poll-interval must be at least 100ms');
  const failOn = core.getInput('fail-on') || 'not-passed';
  if (failOn !== 'not-passed' && failOn !== 'never')
    throw new UsageError(`fail-on must be not-passed or never (got "${failOn}")`);

  return {
    apiUrl,
    apiKey,
    target,
    request,
    file: file === '' ? null : file,
    deploy,
    idempotencyKey: idempotencyKeyOf(request, env),
    idempotencyKeyFor: (completed) => idempotencyKeyOf(completed, env),
    timeoutMs,
    pollIntervalMs,
    junit: core.getInput('junit') || null,
    failOn,
    secrets,
  };
}

/** `Name: value` lines; blank lines and `#` comments are skipped. */
function headerLines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

/** What to run; with `file`, the project is the file's slug, known once the file is read (here ''). */
function readTarget(file: string): Target {
  const test = core.getInput('test');
  const project = core.getInput('project');
  const suite = core.getInput('suite');
  if ([test, project, file].filter((v) => v !== '').length > 1)
    throw new UsageError('give either test or project or file, not two of them');
  if (suite !== '' && project === '' && file === '') throw new UsageError('suite needs project or file');
  if (test !== '') return { kind: 'test', testId: test };
  if (project === '' && file === '') throw new UsageError('one of the inputs test, project or file is required');
  return { kind: suite === '' ? 'project' : 'suite', project, suite: suite === '' ? null : suite };
}

/** `deploy`: `true` or `false` (default), and only with `file`. */
function readDeploy(file: string): boolean {
  const deploy = core.getInput('deploy') || 'false';
  if (deploy !== 'true' && deploy !== 'false') throw new UsageError(`deploy must be true or false (got "${deploy}")`);
  if (deploy === 'true' && file === '') throw new UsageError('deploy needs file');
  return deploy === 'true';
}

function evidenceInput(name: 'trace' | 'video' | 'screenshots'): { [K in typeof name]?: EvidenceMode } {
  const value = core.getInput(name);
  if (value === '') return {};
  const mode = EVIDENCE_MODES.find((m) => m === value);
  if (mode === undefined) throw new UsageError(`${name} must be one of ${EVIDENCE_MODES.join(', ')} (got "${value}")`);
  return { [name]: mode };
}

/**
 * The input `idempotency-key`, else the key the CLI derives from the workflow run, its attempt, the
 * job and the step (plus `idempotency-scope`): a repeated step gets the first answer, a re-run
 * attempt enqueues afresh.
 */
function idempotencyKeyOf(request: RunCreateRequest, env: NodeJS.ProcessEnv): string | undefined {
  const given = core.getInput('idempotency-key');
  if (given !== '') {
    if (!isIdempotencyKey(given)) throw new UsageError(`idempotency-key must be ${IDEMPOTENCY_KEY_RULE}`);
    return given;
  }
  const scope = core.getInput('idempotency-scope');
  return deriveCiIdempotencyKey({ ...env, TESTRUN_CI_DISCRIMINATOR: scope || undefined }, request) ?? undefined;
}
