import { VARIABLE_LIMITS } from '@testrun/contracts';
import { secretValueProblem } from './stored';

describe('secretValueProblem', () => {
  const max = VARIABLE_LIMITS.maxValueLength;

  test('counts code points, as the API schema does, so a value outside the basic plane fits as there', () => {
    // Each emoji is one code point and two UTF-16 units.
    expect(secretValueProblem('😀'.repeat(max))).toBeNull();
    expect(secretValueProblem('😀'.repeat(max + 1))).toMatch(/at most/);
  });

  test('refuses an empty value and a NUL', () => {
    expect(secretValueProblem('')).toBe('the value is empty');
    expect(secretValueProblem('a\0b')).toMatch(/without NUL/);
  });
});
