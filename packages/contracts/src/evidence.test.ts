import {
  DEFAULT_EVIDENCE,
  keepsEvidence,
  readEvidencePolicy,
  recordsEvidence,
  resolveEvidence,
  type EvidenceMode,
} from './evidence';
import { validateProjectFile } from './project-file';
import { parseRunCreateRequest } from './run-request';

describe('resolveEvidence', () => {
  it('gives the deployment default when no level says anything', () => {
    expect(resolveEvidence({})).toEqual({ trace: 'on-failure', video: 'off', screenshots: 'on-failure' });
    expect(resolveEvidence({ project: null, test: null, request: null })).toEqual(DEFAULT_EVIDENCE);
  });

  it('takes request over test over project over default, each key on its own', () => {
    const policy = resolveEvidence({
      project: { trace: 'off', video: 'on', screenshots: 'off' },
      test: { trace: 'on', video: 'on-failure' },
      request: { trace: 'off' },
    });
    // trace: the request's; video: the test's; screenshots: the project's.
    expect(policy).toEqual({ trace: 'off', video: 'on-failure', screenshots: 'off' });
    expect(resolveEvidence({ test: { video: 'on' } })).toEqual({ ...DEFAULT_EVIDENCE, video: 'on' });
    expect(resolveEvidence({ project: { screenshots: 'on' }, request: { video: 'on' } })).toEqual({
      trace: 'on-failure',
      video: 'on',
      screenshots: 'on',
    });
  });

  it('resolves against other defaults when given', () => {
    const all = { trace: 'on', video: 'on', screenshots: 'on' } as const;
    expect(resolveEvidence({ request: { video: 'off' } }, all)).toEqual({ ...all, video: 'off' });
  });
});

describe('modes', () => {
  const cases: Array<[EvidenceMode, boolean, boolean, boolean]> = [
    // mode, records, kept when passed, kept when not passed
    ['on', true, true, true],
    ['on-failure', true, false, true],
    ['off', false, false, false],
  ];
  it.each(cases)('%s records %s, keeps a passing run’s %s, a failing run’s %s', (mode, records, pass, fail) => {
    expect([recordsEvidence(mode), keepsEvidence(mode, true), keepsEvidence(mode, false)]).toEqual([
      records,
      pass,
      fail,
    ]);
  });
});

describe('readEvidencePolicy', () => {
  it('reads a stored policy, and falls back to the default for what a row lacks or holds wrong', () => {
    expect(readEvidencePolicy({ trace: 'on', video: 'on', screenshots: 'off' })).toEqual({
      trace: 'on',
      video: 'on',
      screenshots: 'off',
    });
    expect(readEvidencePolicy(null)).toEqual(DEFAULT_EVIDENCE);
    expect(readEvidencePolicy({ trace: 'always', video: 3 })).toEqual(DEFAULT_EVIDENCE);
    expect(readEvidencePolicy('on')).toEqual(DEFAULT_EVIDENCE);
  });
});

describe('evidence in a run request', () => {
  it('is optional and passes on the keys it gives', () => {
    const none = parseRunCreateRequest({ testId: 'tst_1' });
    expect(none.ok && none.value.evidence).toBeNull();
    const some = parseRunCreateRequest({ projectSlug: 'shop', evidence: { video: 'on', trace: 'off' } });
    expect(some.ok && some.value.evidence).toEqual({ video: 'on', trace: 'off' });
    const empty = parseRunCreateRequest({ projectSlug: 'shop', suiteSlug: 'smoke', evidence: {} });
    expect(empty.ok && empty.value.evidence).toBeNull();
  });

  it.each([
    [{ trace: 'always' }, '/evidence/trace', 'must be one of "on", "on-failure", "off"'],
    [{ screenshots: 'on-first-retry' }, '/evidence/screenshots', 'must be one of "on", "on-failure", "off"'],
    [{ videos: 'on' }, '/evidence/videos', 'is not an allowed field'],
    [{ video: true }, '/evidence/video', 'must be string'],
  ])('refuses %j naming the field', (evidence, path, message) => {
    const parsed = parseRunCreateRequest({ testId: 'tst_1', evidence });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.problem.code).toBe('invalid_body');
    expect(parsed.problem.errors).toContainEqual({ path, message });
  });

  it('refuses evidence that is not an object', () => {
    for (const evidence of [null, 'on', ['on']]) {
      const parsed = parseRunCreateRequest({ testId: 'tst_1', evidence });
      expect(!parsed.ok && parsed.problem.errors.map((e) => e.path)).toContain('/evidence');
    }
  });
});

describe('evidence in a project file', () => {
  const file = (project: unknown, test: unknown) => ({
    slug: 'shop',
    name: 'Shop',
    baseUrl: 'https://shop.example',
    ...(project === undefined ? {} : { evidence: project }),
    suites: [
      {
        slug: 'smoke',
        name: 'Smoke',
        tests: [
          {
            key: 't1',
            name: 'Home',
            steps: [{ action: 'goto', url: '/' }],
            ...(test === undefined ? {} : { evidence: test }),
          },
        ],
      },
    ],
  });

  it('is allowed at project and test level', () => {
    expect(validateProjectFile(file({ trace: 'on' }, { video: 'on-failure', screenshots: 'off' })).ok).toBe(true);
    expect(validateProjectFile(file(undefined, undefined)).ok).toBe(true);
  });

  it('refuses bad modes and unknown keys with their paths', () => {
    const checked = validateProjectFile(file({ trace: 'sometimes' }, { audio: 'on' }));
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.errors.map((e) => e.path).sort()).toEqual(['/evidence/trace', '/suites/0/tests/0/evidence/audio']);
  });
});
