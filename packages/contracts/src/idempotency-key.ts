import { Type, type Static } from '@sinclair/typebox';

/** The longest Idempotency-Key the API accepts. */
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** Visible ASCII (`!` to `~`): no spaces, no control characters, nothing a proxy might rewrite. */
const VISIBLE_ASCII = '\\x21-\\x7E';
const KEY_PATTERN = new RegExp(`^[${VISIBLE_ASCII}]{1,${IDEMPOTENCY_KEY_MAX_LENGTH}}$`);
const NOT_VISIBLE_ASCII = new RegExp(`[^${VISIBLE_ASCII}]`, 'g');

/** The rule for people, as the API, the client and the CLI state it. */
export const IDEMPOTENCY_KEY_RULE = `1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} visible ASCII characters (no spaces)`;

/** The `Idempotency-Key` header of POST /api/v1/runs, as JSON Schema and type. */
export const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
  pattern: `^[${VISIBLE_ASCII}]+$`,
  description: `Replays the first response of the same request for 24 hours (per workspace); ${IDEMPOTENCY_KEY_RULE}.`,
});
export type IdempotencyKey = Static<typeof IdempotencyKey>;

export function isIdempotencyKey(value: string): value is IdempotencyKey {
  return KEY_PATTERN.test(value);
}

/** `text` with every character the rule refuses replaced by `_` (the length is the caller's to keep). */
export function toIdempotencyKeyCharacters(text: string): string {
  return text.replace(NOT_VISIBLE_ASCII, '_');
}
