import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey, type SuiteRunRerunRequest } from '@testrun/contracts';
import { isReportable, openCommand, reportFailure, type CommandContext, type ConnectionFlags } from './connection';
import { parseDuration, UsageError } from './parse-options';
import { EXIT } from './report';
import { enqueueAndFollow, type FollowFlags } from './follow';
import { readSecretInputs, type SecretInputFlags } from './secret-inputs';
import { replayedNote } from './wait-progress';

/** Flags of `testrun cancel`. */
export interface CancelFlags extends ConnectionFlags {
  json?: boolean;
}

/** The kind of an id, by its prefix. */
function kindOf(id: string): 'suite' | 'run' {
  if (id.startsWith('srun_')) return 'suite';
  if (id.startsWith('run_')) return 'run';
  throw new UsageError(`ID must be a run id (run_…) or a suite run id (srun_…), got "${id}"`);
}

/**
 * `testrun cancel ID`: cancels a run or every run of a suite run. Queued runs end skipped at once;
 * running ones are stopped by their worker within seconds. Exit 0 once the API took the cancel
 * (also when it was already finished: then nothing changes), 2 on an API error.
 */
export async function runCancelCommand(id: string, flags: CancelFlags, ctx: CommandContext): Promise<number> {
  const kind = kindOf(id);
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, { ...ctx, now: ctx.now ?? Date.now }, { json });
  try {
    const state = kind === 'suite' ? await client.cancelSuiteRun(id) : await client.cancelRun(id);
    if (json) out.result(JSON.stringify(state, null, 2));
    else
      out.result(
        state.status === 'queued' || state.status === 'running'
          ? `Cancelling ${id}: queued runs are skipped, running runs are being stopped.`
          : `${id} is ${state.status}.`,
      );
    return EXIT.passed;
  } catch (e) {
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

/** Flags of `testrun rerun`. */
export interface RerunFlags extends ConnectionFlags, SecretInputFlags, FollowFlags {
  failed?: boolean;
  all?: boolean;
  idempotencyKey?: string;
  timeout: string;
  pollInterval: string;
}

/**
 * `testrun rerun SRUN --failed|--all`: a new suite run of the failed and error tests (or all) of a
 * finished suite run, with its base URL, headers and variables (give them again with the header and
 * variable flags once the service no longer keeps them); then waits and reports like `testrun run`.
 */
export async function runRerunCommand(suiteRunId: string, flags: RerunFlags, ctx: CommandContext): Promise<number> {
  if (kindOf(suiteRunId) !== 'suite') throw new UsageError(`SRUN must be a suite run id (srun_…), got "${suiteRunId}"`);
  if (Boolean(flags.failed) === Boolean(flags.all)) throw new UsageError('give exactly one of --failed or --all');
  const timeoutMs = parseDuration(flags.timeout, '--timeout');
  if (timeoutMs <= 0) throw new UsageError('--timeout must be greater than zero');
  const pollIntervalMs = parseDuration(flags.pollInterval, '--poll-interval');
  if (pollIntervalMs < 100) throw new UsageError('--poll-interval must be at least 100ms');
  if (flags.idempotencyKey !== undefined && !isIdempotencyKey(flags.idempotencyKey))
    throw new UsageError(`--idempotency-key must be ${IDEMPOTENCY_KEY_RULE}`);
  const { headers, variables, secretVariables } = readSecretInputs(flags, ctx.env);
  const request: SuiteRunRerunRequest = { only: flags.failed ? 'failed' : 'all' };
  if (Object.keys(headers).length > 0) request.headers = headers;
  if (Object.keys(variables).length > 0) request.variables = variables;
  if (Object.keys(secretVariables).length > 0) request.secretVariables = secretVariables;
  const secrets = [...Object.values(headers), ...Object.values(secretVariables)];

  const now = ctx.now ?? Date.now;
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, { ...ctx, now }, { json, secrets });
  return enqueueAndFollow({ out, client, now, ctx }, flags, { timeoutMs, pollIntervalMs }, async () => {
    const enqueued = await client.rerunSuiteRun(suiteRunId, request, { idempotencyKey: flags.idempotencyKey });
    const replayed = replayedNote(enqueued.replayed);
    out.info(`Enqueued suite run ${enqueued.body.suiteRunId}, a rerun of ${suiteRunId} (${request.only})${replayed}`);
    return {
      kind: 'suite' as const,
      project: null,
      suite: null,
      testId: null,
      suiteRunId: enqueued.body.suiteRunId,
      runIds: [],
      idempotencyKey: enqueued.idempotencyKey,
      replayed: enqueued.replayed,
    };
  });
}
