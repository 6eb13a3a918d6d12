import {
  checkBaseUrl,
  IDEMPOTENCY_KEY_RULE,
  isIdempotencyKey,
  type EvidenceMode,
  type RunCreateRequest,
} from '@testrun/contracts';
import { deriveCiIdempotencyKey } from './ci-idempotency';
import { openCommand, type CommandContext, type ConnectionFlags } from './connection';
import { deploySource, loadProjectFile, reportDeployFailure } from './deploy-source';
import { enqueueAndFollow, type FollowFlags } from './follow';
import { EXIT } from './report';
import { parseDuration, parseRetries, parseWorkers, UsageError } from './parse-options';
import { readSecretInputs, type SecretInputFlags } from './secret-inputs';
import { enqueuedIds, replayedNote } from './wait-progress';

/** Flags of `testrun run`, as commander gives them. */
export interface RunFlags extends ConnectionFlags, SecretInputFlags, FollowFlags {
  test?: string;
  project?: string;
  /** A project file: deployed as a preview, which is what runs (the project is the file's slug). */
  file?: string;
  suite?: string;
  baseUrl?: string;
  /** Evidence for this request only (overrides the test's and the project's settings). */
  trace?: EvidenceMode;
  video?: EvidenceMode;
  screenshots?: EvidenceMode;
  /** Retries of each run after a failed or error attempt (overrides the tests'). */
  retries?: string;
  workers?: string;
  idempotencyKey?: string;
  timeout: string;
  pollInterval: string;
}

/** What one invocation enqueues, read from the flags. */
type Target = { kind: 'test'; testId: string } | { kind: 'suite' | 'project'; project: string; suite: string | null };

function targetOf(flags: RunFlags): Target {
  if ([flags.test, flags.project, flags.file].filter((v) => v !== undefined).length > 1)
    throw new UsageError('give either --test or --project or --file, not two of them');
  if (flags.suite !== undefined && flags.project === undefined && flags.file === undefined)
    throw new UsageError('--suite needs --project or --file');
  for (const [flag, v] of [
    ['--test', flags.test],
    ['--project', flags.project],
    ['--suite', flags.suite],
    ['--file', flags.file],
  ] as const) {
    if (v !== undefined && v.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  if (flags.test !== undefined) return { kind: 'test', testId: flags.test };
  // With --file the project is the file's slug, known once the file is read.
  const project = flags.project ?? '';
  if (flags.project === undefined && flags.file === undefined)
    throw new UsageError('one of --test ID, --project SLUG or --file FILE is required');
  return { kind: flags.suite === undefined ? 'project' : 'suite', project, suite: flags.suite ?? null };
}

/** Checks the flags of `testrun run` and builds the request; every problem names its flag. */
function parseRunFlags(flags: RunFlags, env: NodeJS.ProcessEnv) {
  const target = targetOf(flags);
  const timeoutMs = parseDuration(flags.timeout, '--timeout');
  if (timeoutMs <= 0) throw new UsageError('--timeout must be greater than zero');
  const pollIntervalMs = parseDuration(flags.pollInterval, '--poll-interval');
  if (pollIntervalMs < 100) throw new UsageError('--poll-interval must be at least 100ms');
  if (flags.baseUrl !== undefined) {
    const problem = checkBaseUrl(flags.baseUrl);
    // Not quoted: a preview URL may carry credentials (https://user:password@host).
    if (problem) throw new UsageError(`--base-url ${problem}`);
  }
  if (flags.idempotencyKey !== undefined && !isIdempotencyKey(flags.idempotencyKey)) {
    throw new UsageError(`--idempotency-key must be ${IDEMPOTENCY_KEY_RULE}`);
  }
  const { headers, variables, secretVariables } = readSecretInputs(flags, env);
  const request: RunCreateRequest =
    target.kind === 'test'
      ? { testId: target.testId }
      : { projectSlug: target.project, ...(target.suite === null ? {} : { suiteSlug: target.suite }) };
  if (flags.baseUrl !== undefined) request.baseUrl = flags.baseUrl;
  if (Object.keys(headers).length > 0) request.headers = headers;
  if (Object.keys(variables).length > 0) request.variables = variables;
  if (Object.keys(secretVariables).length > 0) request.secretVariables = secretVariables;
  const evidence = {
    ...(flags.trace ? { trace: flags.trace } : {}),
    ...(flags.video ? { video: flags.video } : {}),
    ...(flags.screenshots ? { screenshots: flags.screenshots } : {}),
  };
  if (Object.keys(evidence).length > 0) request.evidence = evidence;
  if (flags.retries !== undefined) request.retries = parseRetries(flags.retries, '--retries');
  if (flags.workers !== undefined) request.workers = parseWorkers(flags.workers, '--workers');
  const secrets = [...Object.values(headers), ...Object.values(secretVariables)];
  return { target, request, secrets, timeoutMs, pollIntervalMs };
}

/**
 * `testrun run`: enqueue, wait, report. Resolves to the exit code. Throws only {@link UsageError}.
 * With `--file`, the file is first deployed as a preview (not active) and the runs execute it: the
 * pull-request flow in one command. An invalid file is printed at its lines and exits 2.
 */
export async function runRunCommand(flags: RunFlags, ctx: CommandContext): Promise<number> {
  const { target, request, secrets, timeoutMs, pollIntervalMs } = parseRunFlags(flags, ctx.env);
  const now = ctx.now ?? Date.now;
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, { ...ctx, now }, { json, secrets });
  if (flags.file !== undefined && target.kind !== 'test') {
    const source = loadProjectFile(flags.file, out);
    if (source === null) return EXIT.error;
    try {
      const preview = await deploySource(client, source, { activate: false, dryRun: false, out });
      if ('dry_run' in preview) throw new Error('the API answered a dry run to a deployment');
      out.info(`Deployed a preview of ${preview.project_slug}: version ${preview.version} (${preview.id})`);
      target.project = preview.project_slug;
      request.projectSlug = preview.project_slug;
      request.deploymentId = preview.id;
    } catch (e) {
      return reportDeployFailure(e, source, out, json);
    }
  }
  const idempotencyKey =
    flags.idempotencyKey ?? ctx.env.TESTRUN_IDEMPOTENCY_KEY ?? deriveCiIdempotencyKey(ctx.env, request) ?? undefined;

  return enqueueAndFollow({ out, client, now, ctx }, flags, { timeoutMs, pollIntervalMs }, async () => {
    const enqueued = await client.enqueue(request, { idempotencyKey });
    const { suiteRunId, runIds } = enqueuedIds(enqueued.body);
    const replayed = replayedNote(enqueued.replayed);
    if (target.kind === 'test') out.info(`Enqueued run ${runIds.join('')} of test ${target.testId}${replayed}`);
    else if (suiteRunId !== null)
      out.info(`Enqueued suite run ${suiteRunId} (${target.project}/${target.suite ?? ''})${replayed}`);
    else out.info(`Enqueued ${runIds.length} runs of project ${target.project}${replayed}`);
    return {
      kind: target.kind,
      project: target.kind === 'test' ? null : target.project,
      suite: target.kind === 'test' ? null : target.suite,
      testId: target.kind === 'test' ? target.testId : null,
      suiteRunId,
      runIds,
      idempotencyKey: enqueued.idempotencyKey,
      replayed: enqueued.replayed,
    };
  });
}
