import { Type } from '@sinclair/typebox';
import { capOf, VARIABLE_LIMITS } from './limits';

/**
 * Variables a test's steps reference in their string fields: `{{vars.NAME}}` for a plain value and
 * `{{secrets.NAME}}` for a secret, which is masked (`****`) in every output of the run. Values come
 * from the request (`variables`, `secretVariables`) and, for secrets, from the workspace's and the
 * project's stored secret variables; the request wins over the project, the project over the
 * workspace. A project file only ever holds the reference, never a secret's value. A name the run
 * cannot resolve ends the run `error`/`invalid_definition` naming the variable.
 */
export const VARIABLE_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
const VARIABLE_NAME = new RegExp(VARIABLE_NAME_PATTERN);

/** Whether `name` may name a variable (a letter or `_`, then letters, digits and `_`; at most 64). */
export function isVariableName(name: string): boolean {
  return VARIABLE_NAME.test(name);
}

/** Where a step references a variable: `{{vars.NAME}}` or `{{secrets.NAME}}`, spaces allowed inside the braces. */
export const VARIABLE_REFERENCE = /\{\{\s*(vars|secrets)\.([A-Za-z_][A-Za-z0-9_]{0,63})\s*\}\}/g;

export type VariableKind = 'vars' | 'secrets';

/** A request's map of variables (plain or secret). */
export function variableMap(description: string) {
  return Type.Record(
    Type.String(),
    Type.String({ maxLength: VARIABLE_LIMITS.maxValueLength, ...capOf('VARIABLE_LIMITS.maxValueLength') }),
    {
      maxProperties: VARIABLE_LIMITS.maxVariables,
      ...capOf('VARIABLE_LIMITS.maxVariables'),
      propertyNames: { pattern: VARIABLE_NAME_PATTERN },
      description,
    },
  );
}
