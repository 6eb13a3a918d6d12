/*
 * The worker's side of the protocol (protocol.ts): reading the reporter's lines. The sandbox wrote
 * them, and the team's code runs there: a line is untrusted input. One over MAX_LINE_BYTES, one that
 * is not JSON, not an object of a known type or not of that type's shape is refused (null).
 */
import {
  MAX_LINE_BYTES,
  STEP_CATEGORIES,
  TEST_STATUSES,
  type AttachmentRecord,
  type ErrorRecord,
  type LineRecord,
  type LocationRecord,
  type StepRecord,
  type TestIdentity,
} from './protocol';

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isBoolean = (value: unknown): value is boolean => typeof value === 'boolean';
const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every(isString);
const optional = (value: unknown, is: (v: unknown) => boolean): boolean => value === undefined || is(value);
const arrayOf = <T>(value: unknown, is: (v: unknown) => v is T): value is T[] =>
  Array.isArray(value) && value.every(is);
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (value: unknown): value is T =>
    (values as readonly unknown[]).includes(value);

const isStatus = oneOf(TEST_STATUSES);
const isCategory = oneOf(STEP_CATEGORIES);

function isLocation(value: unknown): value is LocationRecord {
  return isObject(value) && isString(value.file) && isNumber(value.line) && isNumber(value.column);
}

function isError(value: unknown): value is ErrorRecord {
  return (
    isObject(value) &&
    isString(value.message) &&
    optional(value.stack, isString) &&
    optional(value.location, isLocation) &&
    optional(value.snippet, isString)
  );
}

function isStep(value: unknown): value is StepRecord {
  return (
    isObject(value) &&
    isString(value.title) &&
    isCategory(value.category) &&
    isNumber(value.startMs) &&
    isNumber(value.durationMs) &&
    optional(value.error, isError) &&
    optional(value.location, isLocation) &&
    arrayOf(value.steps, isStep)
  );
}

function isAnnotation(value: unknown): value is { type: string; description?: string } {
  return isObject(value) && isString(value.type) && optional(value.description, isString);
}

function isAttachment(value: unknown): value is AttachmentRecord {
  return (
    isObject(value) &&
    isString(value.name) &&
    isString(value.contentType) &&
    isBoolean(value.automatic) &&
    optional(value.path, isString) &&
    optional(value.size, isNumber)
  );
}

/** A test's identity. */
function isIdentity(value: Fields): value is Fields & TestIdentity {
  return (
    isString(value.file) &&
    isNumber(value.line) &&
    isNumber(value.column) &&
    isString(value.project) &&
    isStrings(value.titlePath)
  );
}

function isProject(value: unknown): value is { name: string; dependencies: string[]; browser: string } {
  return isObject(value) && isString(value.name) && isStrings(value.dependencies) && isString(value.browser);
}

const SHAPES: Readonly<Record<LineRecord['type'], (line: Fields) => boolean>> = {
  config: (l) =>
    isBoolean(l.webServer) &&
    arrayOf(l.projects, isProject) &&
    (l.workers === null || isNumber(l.workers)) &&
    isString(l.rootDir),
  test: (l) => isIdentity(l) && isStrings(l.tags) && isBoolean(l.parallel),
  start: () => true,
  begin: isIdentity,
  attempt: (l) =>
    isIdentity(l) &&
    isBoolean(l.final) &&
    isNumber(l.endedAt) &&
    isNumber(l.retry) &&
    isStatus(l.status) &&
    isStatus(l.expectedStatus) &&
    isNumber(l.durationMs) &&
    arrayOf(l.annotations, isAnnotation) &&
    arrayOf(l.errors, isError) &&
    arrayOf(l.steps, isStep) &&
    arrayOf(l.attachments, isAttachment) &&
    isString(l.stdout) &&
    isString(l.stderr),
  notRun: isIdentity,
  error: (l) => isError(l.error),
  end: () => true,
  oversized: (l) => isNumber(l.bytes) && isString(l.head),
};

const KNOWN = new Set<string>(Object.keys(SHAPES));

/** A line of the reporter's file as its record; null when refused (over the cap, not JSON, of no known type or shape). */
export function readLine(text: string): LineRecord | null {
  if (text.length > MAX_LINE_BYTES || Buffer.byteLength(text) > MAX_LINE_BYTES) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (!isObject(value) || !isString(value.type) || !KNOWN.has(value.type)) return null;
    return SHAPES[value.type as LineRecord['type']](value) ? (value as unknown as LineRecord) : null;
  } catch {
    // Not JSON, or nested deeper than the stack.
    return null;
  }
}

/** The end of the JSON value that begins at `start` of `text` (a string, number, literal, array or object), or -1 when it is cut. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (i >= text.length) return -1;
      if (depth === 0) return i + 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return i;
    } else if (depth === 0 && (c === ',' || c === '}')) return i;
  }
  return -1;
}

/** The members of the JSON object `head` begins, each read whole, up to the first the head cuts. */
function membersOfHead(head: string): Fields {
  const members: Fields = {};
  let at = head.indexOf('{') === 0 ? 1 : -1;
  while (at > 0 && at < head.length) {
    const keyEnd = valueEnd(head, at);
    if (keyEnd < 0 || head[at] !== '"' || head[keyEnd] !== ':') break;
    const end = valueEnd(head, keyEnd + 1);
    if (end < 0) break;
    try {
      members[JSON.parse(head.slice(at, keyEnd)) as string] = JSON.parse(head.slice(keyEnd + 1, end));
    } catch {
      break;
    }
    if (head[end] !== ',') break;
    at = end + 1;
  }
  return members;
}

/**
 * Whose attempt a line over the cap was, from its head (the writer puts the identity first: protocol.ts,
 * recordLine); null when the head does not say.
 */
export function identityOfHead(head: string): Pick<TestIdentity, 'file' | 'project' | 'titlePath'> | null {
  const members = membersOfHead(head);
  if (members.type !== 'attempt') return null;
  const { file, project, titlePath } = members;
  return isString(file) && isString(project) && isStrings(titlePath) ? { file, project, titlePath } : null;
}
