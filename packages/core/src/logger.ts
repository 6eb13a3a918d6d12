import winston from 'winston';

/** Field names whose values never reach a log line, whatever object they sit in. */
const REDACTED_KEYS =
  /^(authorization|headers|cookie|set-cookie|key|apikey|api_key|password|secret|token|headers_sealed|headerssealed|variables_sealed|variablessealed|secretvariables|secret_variables)$/i;

function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = REDACTED_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

const redactFormat = winston.format((info) => {
  for (const key of Object.keys(info)) {
    if (REDACTED_KEYS.test(key)) info[key] = '[redacted]';
    else info[key] = redact(info[key]);
  }
  return info;
});

export type Logger = winston.Logger;

/** Options of {@link createLogger}. */
export type LoggerOptions = {
  /** Name of the process kind, added to every line as `service`. */
  service: string;
  /** winston level (default `info`). */
  level?: string;
  /** Where lines go (default stdout as JSON). Tests pass a stream to read them. */
  stream?: NodeJS.WritableStream;
};

/** One structured JSON logger per process; children carry requestId, runId, workspaceId. */
export function createLogger({ service, level = 'info', stream }: LoggerOptions): Logger {
  return winston.createLogger({
    level,
    defaultMeta: { service },
    format: winston.format.combine(
      redactFormat(),
      winston.format.timestamp(),
      winston.format.errors({ stack: true }),
      winston.format.json(),
    ),
    // winston types its transports as interfaces that extend TransportStream; at run time they are subclasses of it.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
    transports: stream ? new winston.transports.Stream({ stream }) : new winston.transports.Console(),
  });
}

/** The header Prisma puts before what went wrong ("Invalid `prisma.$queryRaw()` invocation:", "… invocation in"). */
const PRISMA_INVOCATION = /^Invalid `[^`]+` invocation\b/;

/**
 * An error's message for a log field or a sentence shown to a person: the first line only (call
 * logs and stack traces that some libraries append stay out), `String(value)` for a non-Error.
 * Blank lines before it are skipped, and for Prisma's "Invalid `…` invocation:" header the last
 * line is taken instead: that is where Prisma says what went wrong.
 */
export function errorMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const first = lines[0] ?? '';
  return PRISMA_INVOCATION.test(first) ? (lines[lines.length - 1] ?? first) : first;
}
