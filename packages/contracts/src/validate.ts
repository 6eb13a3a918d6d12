import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from '@sinclair/typebox';
import { findUnstorableText, overCap, storableText } from './limits';
import type { ProblemFieldError } from './problems';

/**
 * One ajv instance for every schema: all errors, no coercion, no defaults injected behind the
 * caller's back. Errors carry their schema (`verbose`), so a refusal of a cap names it (`x-limit`).
 */
export const ajv = new Ajv({
  allErrors: true,
  strict: true,
  discriminator: true,
  allowUnionTypes: true,
  verbose: true,
});
addFormats(ajv);
ajv.addKeyword({ keyword: 'x-limit', schemaType: 'string' });

const CAP_KEYWORDS = new Set(['maxItems', 'maxProperties', 'maxLength', 'maximum']);

export type Validation<T> = { ok: true; value: T } | { ok: false; errors: ProblemFieldError[] };

/**
 * Returns a function that gives the value typed, or every error with its path, compiling the schema
 * on its first call only: a process (or a test file) pays for the schemas it uses, not for every
 * one a module it loads declares. Every validator also refuses text Postgres cannot store (NUL,
 * unpaired surrogates) anywhere in the value, so no schema has to remember it field by field.
 */
export function compileValidator<S extends TSchema>(schema: S): (value: unknown) => Validation<Static<S>> {
  let compiled: ValidateFunction | undefined;
  return (value) => {
    const validate = (compiled ??= ajv.compile(schema));
    const valid = validate(value);
    const unstorable = findUnstorableText(value);
    if (valid && !unstorable) return { ok: true, value: value as Static<S> };
    const errors = valid ? [] : toFieldErrors(validate.errors);
    if (unstorable && !errors.some((e) => e.path === unstorable.path)) errors.push(unstorable);
    // A path names what the caller sent, which may hold the very text refused: echo it storable.
    return { ok: false, errors: errors.map((e) => ({ path: storableText(e.path), message: e.message })) };
  };
}

function toFieldErrors(errors: ErrorObject[] | null | undefined): ProblemFieldError[] {
  const out: ProblemFieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    // The propertyNames keyword reports its own error per name; its inner errors add nothing.
    if (e.propertyName !== undefined) continue;
    // An unknown discriminator value is already reported by the enum on the same property.
    if (e.keyword === 'discriminator' && (e.params as { error?: string }).error === 'mapping') continue;
    const { path, message } = describe(e);
    const key = `${path}\u0000${message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path, message });
    }
  }
  return out;
}

function describe(e: ErrorObject): ProblemFieldError {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return {
        path: `${e.instancePath}/${escapePointer(String(p.additionalProperty))}`,
        message: 'is not an allowed field',
      };
    case 'required':
      return { path: `${e.instancePath}/${escapePointer(String(p.missingProperty))}`, message: 'is required' };
    case 'propertyNames':
      return { path: `${e.instancePath}/${escapePointer(String(p.propertyName))}`, message: 'is not a valid name' };
    case 'enum':
      return {
        path: e.instancePath,
        message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    case 'discriminator':
      return { path: `${e.instancePath}/${String(p.tag)}`, message: 'is required and must be a string' };
    default: {
      const message = e.message ?? 'is invalid';
      const cap: unknown = e.parentSchema?.['x-limit'];
      if (CAP_KEYWORDS.has(e.keyword) && typeof cap === 'string')
        return { path: e.instancePath, message: overCap(cap, message) };
      return { path: e.instancePath, message };
    }
  }
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
