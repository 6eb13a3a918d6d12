import { readFileSync } from 'node:fs';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { ProblemFieldError } from '@testrun/contracts';
import { UsageError } from './parse-options';

/** A project file read from disk: its YAML document, kept to point at the line of an error. */
export interface ProjectSource {
  /** The path as the user gave it: what every error line starts with. */
  file: string;
  /** The document as JSON (what the deployment sends as `project`). */
  project: Record<string, unknown>;
  /** The `slug` of the file, the project it deploys. */
  slug: string;
  document: Document;
  lines: LineCounter;
}

/** A fault of a project file at its place in the file (line and column from 1). */
export interface ProjectFileError {
  line: number;
  column: number;
  message: string;
}

function located(lines: LineCounter, offset: number, message: string): ProjectFileError {
  const { line, col } = lines.linePos(offset);
  return { line, column: col, message };
}

/** `file:line:column: message`, the form editors and compilers print. */
export function formatProjectFileError(file: string, e: ProjectFileError): string {
  return `${file}:${e.line}:${e.column}: ${e.message}`;
}

/**
 * Reads and parses a project file (YAML, so JSON too). Resolves to the source, or to what is wrong
 * at its place: YAML syntax errors, or a document that is not a mapping with a `slug`. A file that
 * cannot be read is a {@link UsageError}.
 */
export function readProjectSource(
  file: string,
): { ok: true; source: ProjectSource } | { ok: false; errors: ProjectFileError[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0)
    return { ok: false, errors: document.errors.map((e) => located(lines, e.pos[0], e.message)) };
  const project: unknown = document.toJS();
  if (typeof project !== 'object' || project === null || Array.isArray(project))
    return { ok: false, errors: [located(lines, 0, 'a project file is a mapping (slug, name, baseUrl, suites)')] };
  const { slug } = project as { slug?: unknown };
  if (typeof slug !== 'string' || slug === '') {
    const at = isNode(document.contents) ? document.contents.range[0] : 0;
    return { ok: false, errors: [located(lines, at, 'the project file has no `slug`')] };
  }
  return { ok: true, source: { file, project: project as Record<string, unknown>, slug, document, lines } };
}

/** The segments of a JSON pointer under `/project` (RFC 6901 escapes undone). */
function segmentsOf(pointer: string): string[] {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return segments[0] === 'project' ? segments.slice(1) : segments;
}

/**
 * Where the node a JSON pointer of the service names starts in the file: the node itself, or, when
 * the file has no such node (a required field left out), the nearest one above it that it has.
 */
function offsetOf(source: ProjectSource, segments: readonly string[]): number {
  for (let depth = segments.length; depth > 0; depth--) {
    const node = source.document.getIn(segments.slice(0, depth), true);
    if (isNode(node) && node.range) return node.range[0];
  }
  const root = source.document.contents;
  return isNode(root) && root.range ? root.range[0] : 0;
}

/**
 * The service's errors of the file (JSON pointers under `/project`), each at its line of the file
 * and led by the field it is about (`name is required`, `action must be one of …`).
 */
export function locateErrors(source: ProjectSource, errors: readonly ProblemFieldError[]): ProjectFileError[] {
  return errors.map((e) => {
    const segments = segmentsOf(e.path);
    const field = segments.at(-1);
    const message = field === undefined || /^[0-9]+$/.test(field) ? e.message : `${field} ${e.message}`;
    return located(source.lines, offsetOf(source, segments), message);
  });
}
