import fc from 'fast-check';

/** The part of a JSON Schema (as TypeBox builds it) the fuzzer reads. */
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  /** Keywords the fuzzer does not read (descriptions, formats); also lets a schema with none of the above (TypeBox's Unsafe) fit. */
  [keyword: string]: unknown;
};

/** Strings worth trying for a field, by name: values that exist in the target, and edge cases. */
export type StringHints = Record<string, readonly string[]>;

function stringOf(schema: JsonSchema, hints: readonly string[] | undefined): fc.Arbitrary<string> {
  const generated = fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 40) });
  return hints && hints.length > 0
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...hints) }, generated)
    : generated;
}

/**
 * Values that follow a contract's JSON Schema (TypeBox values are JSON Schemas): every declared
 * property with its type and bounds, required ones always, optional ones sometimes, so mutations
 * start from requests the API could accept.
 */
export function arbitraryOf(schema: JsonSchema, hints: StringHints = {}, name = ''): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => arbitraryOf(s, hints, name)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return stringOf(schema, hints[name]);
    case 'integer':
      return fc.integer();
    case 'number':
      return fc.double({ noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryOf(schema.items ?? {}, hints, name), { maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case 'object': {
      if (schema.properties) {
        const required = new Set(schema.required ?? []);
        const model: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, sub] of Object.entries(schema.properties)) model[key] = arbitraryOf(sub, hints, key);
        return fc.record(model, { requiredKeys: [...required] });
      }
      const [pattern] = Object.values(schema.patternProperties ?? {});
      const value = pattern ? arbitraryOf(pattern, hints, `${name}.*`) : fc.string();
      return fc.dictionary(stringOf({ maxLength: 20 }, hints[`${name}.name`]), value, {
        maxKeys: Math.min(schema.maxProperties ?? 3, 3),
      });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
