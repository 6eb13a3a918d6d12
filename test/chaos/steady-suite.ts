import type { ProjectFile } from '@testrun/contracts';

/**
 * The project the chaos tests run: one suite `steady` of `tests` tests that pass when nothing goes
 * wrong, each busy long enough (about 2 s) for a fault to land while it runs.
 */
export function steadyProject(baseUrl: string, tests: number): ProjectFile {
  return {
    slug: 'chaos',
    name: 'Chaos',
    baseUrl,
    suites: [
      {
        slug: 'steady',
        name: 'Steady',
        tests: Array.from({ length: tests }, (_, i) => ({
          key: `t${i + 1}`,
          name: `Test ${i + 1}`,
          steps: [
            { action: 'goto' as const, url: '/' },
            { action: 'wait' as const, ms: 1_500 },
            { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop' },
          ],
        })),
      },
    ],
  };
}
