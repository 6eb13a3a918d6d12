import { VARIABLE_REFERENCE, type Step, type VariableKind } from '@testrun/contracts';

/** The values a run's steps can reference, by kind. */
export type VariableValues = Record<VariableKind, Readonly<Record<string, string>>>;

/** A reference a run cannot resolve, named for the `invalid_definition` message (never with a value). */
export type UnknownVariable = { step: number; reference: string };

/** The names of every `{{kind.NAME}}` in the steps' string fields, by kind. */
export function referencedNames(steps: readonly Step[]): Record<VariableKind, Set<string>> {
  const names: Record<VariableKind, Set<string>> = { vars: new Set(), secrets: new Set() };
  for (const step of steps)
    for (const text of stringFields(step))
      for (const match of text.matchAll(VARIABLE_REFERENCE)) {
        const [, kind, name] = match;
        if ((kind === 'vars' || kind === 'secrets') && name !== undefined) names[kind].add(name);
      }
  return names;
}

/** The first reference (1-based step) that `values` cannot resolve, or null. */
export function findUnknownVariable(steps: readonly Step[], values: VariableValues): UnknownVariable | null {
  for (const [i, step] of steps.entries())
    for (const text of stringFields(step))
      for (const match of text.matchAll(VARIABLE_REFERENCE)) {
        const [, kind, name] = match;
        if ((kind === 'vars' || kind === 'secrets') && name !== undefined && !Object.hasOwn(values[kind], name))
          return { step: i + 1, reference: `${kind}.${name}` };
      }
  return null;
}

/**
 * The step with every `{{vars.NAME}}` and `{{secrets.NAME}}` of its string fields replaced by its
 * value (`action` excepted). Call {@link findUnknownVariable} first: an unknown reference is left as written.
 */
export function resolveStep(step: Step, values: VariableValues): Step {
  const resolved: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(step))
    resolved[field] = field !== 'action' && typeof value === 'string' ? resolveText(value, values) : value;
  // Only string fields other than the action changed: the step keeps its shape.
  return resolved as Step;
}

function resolveText(text: string, values: VariableValues): string {
  if (!text.includes('{{')) return text;
  return text.replace(VARIABLE_REFERENCE, (reference, kind: string, name: string) => {
    const table = kind === 'secrets' ? values.secrets : values.vars;
    return Object.hasOwn(table, name) ? (table[name] ?? reference) : reference;
  });
}

function stringFields(step: Step): string[] {
  return Object.entries(step).flatMap(([field, value]) =>
    field !== 'action' && typeof value === 'string' ? [value] : [],
  );
}
