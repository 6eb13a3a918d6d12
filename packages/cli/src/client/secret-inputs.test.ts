import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { UsageError } from './parse-options';
import { readSecretInputs, type SecretInputFlags } from './secret-inputs';

const none: SecretInputFlags = { header: [], headerEnv: [], var: [], secretVarEnv: [] };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'headers-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readSecretInputs', () => {
  it('reads headers from TESTRUN_HEADERS, a file, the environment and flags; a later source wins', () => {
    const file = path.join(dir, 'headers.txt');
    writeFileSync(file, '# preview access\nX-From-File: file-value\nx-bypass: from-file\n\n');
    const env = { TESTRUN_HEADERS: '{"Authorization":"Basic abc","X-Bypass":"from-env-json"}', BYPASS: 'from-env-var' };
    const inputs = readSecretInputs(
      { ...none, headerFile: file, headerEnv: ['X-Bypass=BYPASS'], header: ['X-Flag: flag-value'] },
      env,
    );
    expect(inputs.headers).toEqual({
      Authorization: 'Basic abc',
      'X-From-File': 'file-value',
      'X-Bypass': 'from-env-var',
      'X-Flag': 'flag-value',
    });
  });

  it('reads TESTRUN_HEADERS as "Name: value" lines too', () => {
    expect(readSecretInputs(none, { TESTRUN_HEADERS: 'A: 1\nB: two words' }).headers).toEqual({
      A: '1',
      B: 'two words',
    });
  });

  it('reads a header file written as a JSON object', () => {
    const file = path.join(dir, 'headers.json');
    writeFileSync(file, '{ "Authorization": "Bearer tok-123456", "X-Env": "preview" }\n');
    expect(readSecretInputs({ ...none, headerFile: file }, {}).headers).toEqual({
      Authorization: 'Bearer tok-123456',
      'X-Env': 'preview',
    });
  });

  it('reads plain variables from flags and secret ones from the environment', () => {
    const inputs = readSecretInputs(
      { ...none, var: ['USER=ada', 'EMPTY='], secretVarEnv: ['PASSWORD=LOGIN_PASSWORD'] },
      { LOGIN_PASSWORD: 's3cret=with=equals' },
    );
    expect(inputs.variables).toEqual({ USER: 'ada', EMPTY: '' });
    expect(inputs.secretVariables).toEqual({ PASSWORD: 's3cret=with=equals' });
  });

  it('refuses bad input naming the flag and never quoting a value', () => {
    const refused = (flags: Partial<SecretInputFlags>, env: NodeJS.ProcessEnv = {}) => {
      try {
        readSecretInputs({ ...none, ...flags }, env);
      } catch (e) {
        if (e instanceof UsageError) return e.message;
        throw e;
      }
      throw new Error('accepted');
    };
    expect(refused({ headerEnv: ['X-A=UNSET_VAR'] })).toBe(
      '--header-env #1 (X-A) names UNSET_VAR environment variable, which is not set',
    );
    expect(refused({ secretVarEnv: ['1BAD=X'] }, { X: 'hidden-value' })).toBe(
      '--secret-var-env #1 has an invalid variable name',
    );
    expect(refused({ var: ['novalue'] })).toBe('--var #1 must look like "NAME=value"');
    expect(refused({}, { TESTRUN_HEADERS: '{"A": 1}' })).toBe('TESTRUN_HEADERS: the value of A must be a string');
    expect(refused({}, { TESTRUN_HEADERS: 'not a header line' })).toBe(
      'TESTRUN_HEADERS line 1 must look like "Name: value"',
    );
    expect(refused({ headerEnv: ['X-A=V'] }, { V: 'bad\r\nvalue' })).not.toContain('bad');
    expect(refused({}, { TESTRUN_HEADERS: '{"Authorization": "Basic hidden-value"' })).toBe(
      'TESTRUN_HEADERS is not a valid JSON object',
    );
    expect(refused({}, { TESTRUN_HEADERS: '{"Bad Name": "hidden-value"}' })).toBe(
      'TESTRUN_HEADERS key #1 has an invalid header name',
    );
    expect(refused({ headerEnv: ['X-A'] }, { X_A: 'hidden-value' })).toBe(
      '--header-env #1 must look like "Name=ENV_VAR"',
    );
    expect(refused({ headerEnv: ['X-A=V', 'x-a=V'] }, { V: 'hidden-value' })).toBe(
      '--header-env #2 repeats header x-a',
    );
    const file = path.join(dir, 'refused.txt');
    writeFileSync(file, '# comment\nX-Ok: fine-value\n\nhidden-value-without-a-colon\n');
    // The line as numbered in the file, and never its text.
    expect(refused({ headerFile: file })).toBe('--header-file line 4 must look like "Name: value"');
    expect(refused({ headerFile: '/nonexistent/headers' })).toMatch(
      /^--header-file \/nonexistent\/headers cannot be read/,
    );
  });
});
