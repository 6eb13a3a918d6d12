import { buildOpenApiDocument } from './openapi';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IdempotencyKey,
  isIdempotencyKey,
  toIdempotencyKeyCharacters,
} from './idempotency-key';
import { parseRunCreateRequest } from './run-request';
import { isHeaderName, isHeaderValue } from './runs';
import { compileValidator } from './validate';

describe('the Idempotency-Key rule', () => {
  const matchesSchema = compileValidator(IdempotencyKey);
  const cases: Array<[string, boolean]> = [
    ['build-123', true],
    ['testrun:gh:acme/shop:42:1:e2e:__run::0123456789abcdef', true],
    ['!~', true],
    ['x'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH), true],
    ['x'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH + 1), false],
    ['', false],
    ['with space', false],
    ['tab\there', false],
    ['é', false],
  ];
  it.each(cases)('%j → %s, the same by the check and by the JSON Schema', (key, valid) => {
    expect(isIdempotencyKey(key)).toBe(valid);
    expect(matchesSchema(key).ok).toBe(valid);
  });

  it('replaces every refused character, so a derived key passes the rule', () => {
    const key = toIdempotencyKeyCharacters('testrun:my job: ünïcode\n');
    expect(key).toBe('testrun:my_job:__n_code_');
    expect(isIdempotencyKey(key)).toBe(true);
  });

  it('is the schema the OpenAPI document gives for the header', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, { post?: { parameters: unknown[] } }> };
    expect(doc.paths['/api/v1/runs']?.post?.parameters).toContainEqual(
      expect.objectContaining({
        name: 'Idempotency-Key',
        schema: JSON.parse(JSON.stringify(IdempotencyKey)) as unknown,
      }),
    );
  });
});

describe('header names', () => {
  it('are RFC 9110 tokens', () => {
    for (const name of ['Authorization', 'x-vercel-protection-bypass', "a!#$%&'*+.^_`|~1"])
      expect(isHeaderName(name)).toBe(true);
    for (const name of ['', 'Bad Name', 'a:b', 'é', 'a\r\n']) expect(isHeaderName(name)).toBe(false);
  });
});

describe('header values', () => {
  it('are what a browser can send: Latin-1 only, no CR, LF or NUL', () => {
    for (const value of ['', 'Basic ZGVtbzpwcmV2aWV3', 'caf\u00e9', 'tab\there', '\u00ff\u00a0'])
      expect(isHeaderValue(value)).toBe(true);
    for (const value of ['a\rb', 'a\nb', 'a\u0000b', '\u0100', '\u2028', '\u65e5\u672c', '\u{1f4a5}', '\ud800'])
      expect(isHeaderValue(value)).toBe(false);
  });

  it('beyond Latin-1 make a run request invalid, naming the header and never quoting the value', () => {
    const result = parseRunCreateRequest({
      testId: 'tst_x',
      headers: { 'X-Ok': 'caf\u00e9', 'X-Token': 's3cret\u2603' },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.errors).toEqual([
      { path: '/headers/X-Token', message: expect.stringMatching(/Latin-1/) as string },
    ]);
    expect(result.problem.detail).toContain('/headers/X-Token');
    expect(JSON.stringify(result.problem)).not.toContain('s3cret');
  });
});
