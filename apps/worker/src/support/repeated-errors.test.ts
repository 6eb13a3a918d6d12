import { foldRepeats } from './repeated-errors';

describe('foldRepeats', () => {
  it('reports a repeating message once per period, with how many were folded into the next report', () => {
    let t = 0;
    const reports: Array<[string, number]> = [];
    const onError = foldRepeats((e, folded) => reports.push([e.message, folded]), { everyMs: 1_000, now: () => t });
    const refused = () => new Error('connect ECONNREFUSED 127.0.0.1:6379');
    for (t = 0; t < 3_000; t += 100) onError(refused());
    expect(reports).toEqual([
      ['connect ECONNREFUSED 127.0.0.1:6379', 0],
      ['connect ECONNREFUSED 127.0.0.1:6379', 9],
      ['connect ECONNREFUSED 127.0.0.1:6379', 9],
    ]);
  });

  it('reports distinct messages each, even within one period', () => {
    const reports: string[] = [];
    const onError = foldRepeats((e) => reports.push(e.message), { everyMs: 1_000, now: () => 0 });
    onError(new Error('Missing lock for job a'));
    onError(new Error('Missing lock for job b'));
    onError(new Error('Missing lock for job a'));
    expect(reports).toEqual(['Missing lock for job a', 'Missing lock for job b']);
  });
});
