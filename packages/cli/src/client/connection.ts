import { TestrunApiError, TestrunClient, TestrunNetworkError, type RetryInfo } from '@testrun/client';
import { formatDuration, type FailureReport } from '@testrun/contracts';
import { Output, type OutputStreams } from './output';
import { secretsOf, UsageError } from './parse-options';
import { EXIT } from './report';

/** Flags shared by every command that talks to the API. */
export interface ConnectionFlags {
  apiUrl?: string;
  apiKey?: string;
}

/** Environment and streams of one invocation, injectable so the command can be driven in-process. */
export interface CommandContext {
  env: NodeJS.ProcessEnv;
  streams: OutputStreams;
  now?: () => number;
  /** Where SIGINT and SIGTERM come from (default the process). */
  signals?: Pick<NodeJS.Process, 'once' | 'off'>;
  /** Records the invocation's exit code (default: the process's `exitCode`). */
  setExitCode?: (code: number) => void;
  /** Ends the invocation at once, on a usage error or --help; never returns (default: `process.exit`). */
  exit?: (code: number) => never;
}

/** Sets the exit code of the invocation `ctx` runs. */
export function setExitCode(ctx: CommandContext, code: number): void {
  if (ctx.setExitCode) ctx.setExitCode(code);
  else process.exitCode = code;
}

/** Ends the invocation `ctx` runs with `code`. */
export function exitNow(ctx: CommandContext, code: number): never {
  return ctx.exit ? ctx.exit(code) : process.exit(code);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** API URL and key: flags override `TESTRUN_API_URL` / `TESTRUN_API_KEY`. */
function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): { apiUrl: string; apiKey: string } {
  const apiUrl = flags.apiUrl || env.TESTRUN_API_URL || '';
  const apiKey = flags.apiKey || env.TESTRUN_API_KEY || '';
  if (!apiUrl) throw new UsageError('no API URL: pass --api-url or set TESTRUN_API_URL');
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set TESTRUN_API_KEY');
  if (!isHttpUrl(apiUrl))
    // Not quoted: a URL may carry credentials (https://user:password@host).
    throw new UsageError('--api-url / TESTRUN_API_URL must be an absolute http(s) URL');
  return { apiUrl, apiKey };
}

/** The line that tells a person why nothing happens for a while. */
function retryNotice(r: RetryInfo): string {
  const cause = r.status === null ? 'No answer' : `HTTP ${r.status}`;
  return `${cause} on ${r.method} ${r.path}; retrying in ${formatDuration(r.delayMs)}`;
}

/**
 * What every API command starts with: the connection (usage errors first), the output with every
 * secret redacted (`secrets` plus the API key), and the client, its retries announced on the output.
 */
export function openCommand(
  flags: ConnectionFlags,
  ctx: CommandContext,
  options: { json: boolean; secrets?: readonly string[] },
): { out: Output; client: TestrunClient } {
  const connection = resolveConnection(flags, ctx.env);
  const secrets = secretsOf([...(options.secrets ?? []), connection.apiKey]);
  const out = new Output(ctx.streams, secrets, options.json, ctx.now);
  const client = new TestrunClient({
    ...connection,
    userAgent: 'testrun-cli',
    // Only when given: an undefined `now` would replace the client's clock (read when an answer is an error).
    ...(ctx.now ? { now: ctx.now } : {}),
    onRetry: (r) => out.info(retryNotice(r)),
  });
  return { out, client };
}

/** True for a failure the command reports itself (exit 2) instead of crashing. */
export function isReportable(e: unknown): e is TestrunApiError | TestrunNetworkError {
  return e instanceof TestrunApiError || e instanceof TestrunNetworkError;
}

/** Prints an API or network failure (never a header value) and gives exit code 2. */
export function reportFailure(
  e: TestrunApiError | TestrunNetworkError,
  out: Output,
  json: boolean,
): FailureReport['exitCode'] {
  let report: FailureReport;
  if (e instanceof TestrunApiError) {
    const fields = e.errors.map((f) => `${f.path || 'body'} ${f.message}`).join('; ');
    const message = `API error ${e.status} ${e.code}: ${e.detail}${fields && !e.detail.includes(fields) ? ` (${fields})` : ''}`;
    report = {
      status: 'error',
      exitCode: EXIT.error,
      message,
      error: { kind: 'api', status: e.status, code: e.code, detail: e.detail, errors: e.errors },
    };
  } else {
    const message = `cannot reach the API: ${e.message}`;
    report = { status: 'error', exitCode: EXIT.error, message, error: { kind: 'network', detail: e.message } };
  }
  out.info(`testrun: ${report.message}`);
  if (json) out.result(JSON.stringify(report, null, 2));
  return report.exitCode;
}
