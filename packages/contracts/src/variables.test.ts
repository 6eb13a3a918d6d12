import { parseRunCreateRequest } from './run-request';
import { VARIABLE_LIMITS } from './limits';
import { isVariableName } from './variables';

describe('variables in a run request', () => {
  it('are accepted with valid names and given back, null when absent or empty', () => {
    const parsed = parseRunCreateRequest({
      testId: 'tst_1',
      variables: { USER: 'ada', _x1: '' },
      secretVariables: { PASSWORD: 's3cret' },
    });
    expect(parsed).toMatchObject({
      ok: true,
      value: { variables: { USER: 'ada', _x1: '' }, secretVariables: { PASSWORD: 's3cret' } },
    });
    expect(parseRunCreateRequest({ testId: 'tst_1', variables: {} })).toMatchObject({
      ok: true,
      value: { variables: null, secretVariables: null },
    });
  });

  it('refuse bad names, non-strings, NUL and oversize maps without quoting a value', () => {
    const refused = (body: object) => {
      const parsed = parseRunCreateRequest({ testId: 'tst_1', ...body });
      if (parsed.ok) throw new Error('accepted');
      return parsed.problem;
    };
    expect(refused({ secretVariables: { '1BAD': 'x' } }).code).toBe('invalid_body');
    expect(refused({ variables: { A: 1 } }).errors.map((e) => e.path)).toContain('/variables/A');
    const nul = refused({ secretVariables: { PW: 'hidden\u0000value' } });
    expect(nul.errors).toContainEqual({ path: '/secretVariables/PW', message: 'must not contain NUL' });
    expect(JSON.stringify(nul)).not.toContain('hidden');
    const many = Object.fromEntries(Array.from({ length: VARIABLE_LIMITS.maxVariables + 1 }, (_, i) => [`V${i}`, 'x']));
    expect(refused({ variables: many }).code).toBe('limit_exceeded');
    const big = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`V${i}`, 'x'.repeat(VARIABLE_LIMITS.maxValueLength)]),
    );
    const oversize = refused({ secretVariables: big });
    expect(oversize.code).toBe('limit_exceeded');
    expect(oversize.errors.map((e) => e.path)).toContain('/secretVariables');
    expect(JSON.stringify(oversize)).not.toContain('xxxx');
  });

  it('names are a letter or _, then letters, digits and _, at most 64', () => {
    expect(['A', '_', 'a_1', 'X'.repeat(64)].every(isVariableName)).toBe(true);
    expect(['', '1A', 'A-B', 'A.B', 'X'.repeat(65)].some(isVariableName)).toBe(false);
  });
});
