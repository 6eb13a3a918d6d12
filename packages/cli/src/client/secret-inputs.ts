import { readFileSync } from 'node:fs';
import { isVariableName } from '@testrun/contracts';
import { parseHeaders, UsageError } from './parse-options';

/** The flags of `testrun run` that carry header values and variables. */
export interface SecretInputFlags {
  header: string[];
  headerEnv: string[];
  headerFile?: string;
  var: string[];
  secretVarEnv: string[];
}

/** What a run sends besides its target: never printed, and every value redacted from the output. */
export type SecretInputs = {
  headers: Record<string, string>;
  variables: Record<string, string>;
  secretVariables: Record<string, string>;
};

/**
 * Reads header values and variables from every source, so that no value has to be on a command
 * line (CI logs and shell history show command lines): `TESTRUN_HEADERS` (a JSON object, or
 * `Name: value` lines), `--header-file FILE` (either form too), `--header-env Name=ENV_VAR`,
 * then `--header "Name: value"`; a later source replaces a header of the same name (names are
 * case-insensitive). `--var NAME=value` gives a plain variable and `--secret-var-env NAME=ENV_VAR`
 * a secret one. Messages name the flag and the name, never a value.
 */
export function readSecretInputs(flags: SecretInputFlags, env: NodeJS.ProcessEnv): SecretInputs {
  const headers: Record<string, string> = {};
  const put = (from: Record<string, string>) => {
    for (const [name, value] of Object.entries(from)) {
      for (const existing of Object.keys(headers))
        if (existing.toLowerCase() === name.toLowerCase()) Reflect.deleteProperty(headers, existing);
      headers[name] = value;
    }
  };
  const fromEnv = env.TESTRUN_HEADERS;
  if (fromEnv !== undefined && fromEnv.trim() !== '') put(parseHeaderText(fromEnv, 'TESTRUN_HEADERS'));
  if (flags.headerFile !== undefined) put(parseHeaderText(readHeaderFile(flags.headerFile), '--header-file'));
  put(parseHeaderEnv(flags.headerEnv, env));
  put(parseHeaders(flags.header));

  const variables: Record<string, string> = {};
  flags.var.forEach((raw, i) => {
    const [name, value] = splitAssignment(raw, `--var #${i + 1}`, 'NAME=value');
    variables[name] = value;
  });
  const secretVariables: Record<string, string> = {};
  flags.secretVarEnv.forEach((raw, i) => {
    const where = `--secret-var-env #${i + 1}`;
    const [name, envName] = splitAssignment(raw, where, 'NAME=ENV_VAR');
    secretVariables[name] = fromEnvironment(env, envName, `${where} (${name})`);
  });
  return { headers, variables, secretVariables };
}

function readHeaderFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : 'unreadable';
    throw new UsageError(`--header-file ${file} cannot be read (${code})`);
  }
}

/**
 * `Name: value` lines (blank lines and `#` comments skipped), or a JSON object of strings. A message
 * names `source` and the line (counted in the file as written) or the JSON key, never a value.
 */
function parseHeaderText(text: string, source: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new UsageError(`${source} is not a valid JSON object`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new UsageError(`${source} must be a JSON object of header names to values`);
    return checkedHeaders(
      Object.entries(parsed).map(([name, value], i) => {
        if (typeof value !== 'string') throw new UsageError(`${source}: the value of ${name} must be a string`);
        return { where: `${source} key #${i + 1}`, line: `${name}: ${value}` };
      }),
    );
  }
  return checkedHeaders(
    text
      .split(/\r?\n/)
      .map((line, i) => ({ where: `${source} line ${i + 1}`, line }))
      .filter(({ line }) => line.trim() !== '' && !line.trimStart().startsWith('#')),
  );
}

/** parseHeaders one entry at a time, so that a message names the entry's own place. */
function checkedHeaders(entries: Array<{ where: string; line: string }>): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { where, line } of entries) {
    let one: Record<string, string>;
    try {
      one = parseHeaders([line]);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(e.message.replace(/^--header #1/, where));
      throw e;
    }
    for (const [name, value] of Object.entries(one)) {
      if (seen.has(name.toLowerCase())) throw new UsageError(`${where} repeats header ${name}`);
      seen.add(name.toLowerCase());
      headers[name] = value;
    }
  }
  return headers;
}

function parseHeaderEnv(values: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const lines = values.map((raw, i) => {
    const where = `--header-env #${i + 1}`;
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new UsageError(`${where} must look like "Name=ENV_VAR"`);
    const name = raw.slice(0, eq).trim();
    return { where, line: `${name}: ${fromEnvironment(env, raw.slice(eq + 1).trim(), `${where} (${name})`)}` };
  });
  return checkedHeaders(lines);
}

function splitAssignment(raw: string, where: string, shape: string): [string, string] {
  const eq = raw.indexOf('=');
  if (eq <= 0) throw new UsageError(`${where} must look like "${shape}"`);
  const name = raw.slice(0, eq);
  if (!isVariableName(name)) throw new UsageError(`${where} has an invalid variable name`);
  return [name, raw.slice(eq + 1)];
}

function fromEnvironment(env: NodeJS.ProcessEnv, name: string, where: string): string {
  const value = env[name];
  if (name === '' || value === undefined)
    throw new UsageError(`${where} names ${name || 'no'} environment variable, which is not set`);
  return value;
}
