import type { VisualApproval } from '@testrun/contracts';
import { TestrunApiError } from './errors';
import { TestrunClient } from './testrun-client';

/** A client whose fetch answers from `answers` in turn, recording each request; sleeping costs nothing. */
function clientAnswering(answers: Array<() => Response | Error>) {
  const calls: { url: string; method: string; body: string | undefined; headers: Record<string, string> }[] = [];
  const fetchImpl = ((url: string, init: RequestInit) => {
    calls.push({
      url,
      method: String(init.method),
      body: init.body as string | undefined,
      headers: init.headers as Record<string, string>,
    });
    const next = answers.shift();
    if (!next) return Promise.reject(new Error(`unexpected request ${url}`));
    const answer = next();
    return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
  }) as unknown as typeof fetch;
  const client = new TestrunClient({
    apiUrl: 'http://api.test',
    apiKey: 'trk_secret',
    fetch: fetchImpl,
    sleep: () => Promise.resolve(),
    random: () => 0.5,
  });
  return { client, calls };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' },
  });

const approval: VisualApproval = {
  approved: [
    {
      id: 'vis_1',
      name: 'home.png',
      path: 'tests/home.spec.ts-snapshots/home-chromium-linux.png',
      kind: 'changed',
      approved: true,
      approved_at: '2026-12-07T10:00:00.000Z',
      approved_by: 'ci',
    },
  ],
  deployments: ['dep_1'],
};

describe('approveVisualChanges', () => {
  it("POSTs {} to a run's approval route: every change not yet approved", async () => {
    const { client, calls } = clientAnswering([() => json(200, approval)]);
    await expect(client.approveVisualChanges({ runId: 'run_1' })).resolves.toEqual(approval);
    expect(calls).toEqual([
      expect.objectContaining({
        url: 'http://api.test/api/v1/runs/run_1/visual-changes/approve',
        method: 'POST',
        body: '{}',
      }),
    ]);
    expect(calls[0]?.headers).toMatchObject({ authorization: 'Bearer trk_secret', 'content-type': 'application/json' });
    expect(calls[0]?.headers).not.toHaveProperty('idempotency-key');
  });

  it("names the changes to approve, on a suite run's route", async () => {
    const { client, calls } = clientAnswering([() => json(200, { approved: [], deployments: [] })]);
    await client.approveVisualChanges({ suiteRunId: 'srun_1/x' }, ['vis_1', 'vis_2']);
    expect(calls[0]?.url).toBe('http://api.test/api/v1/suite-runs/srun_1%2Fx/visual-changes/approve');
    expect(JSON.parse(calls[0]?.body ?? '')).toEqual({ ids: ['vis_1', 'vis_2'] });
  });

  it('is retried after a network fault or a 5xx: a second approval approves nothing more', async () => {
    const reset = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    const { client, calls } = clientAnswering([
      () => reset,
      () => json(503, { code: 'service_unavailable', title: 'Unavailable', status: 503, detail: 'busy' }),
      () => json(200, approval),
    ]);
    await expect(client.approveVisualChanges({ runId: 'run_1' })).resolves.toEqual(approval);
    expect(calls).toHaveLength(3);
  });

  it('gives a 403 as a TestrunApiError with its code and detail, without retrying it', async () => {
    const detail = 'This request needs an API key with the "deploy" scope; this key\'s scopes do not include it.';
    const { client, calls } = clientAnswering([
      () =>
        json(403, {
          type: '/api/v1/problems/insufficient_scope',
          title: 'Insufficient scope',
          status: 403,
          detail,
          code: 'insufficient_scope',
          required_scope: 'deploy',
        }),
    ]);
    const error = await client.approveVisualChanges({ runId: 'run_1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TestrunApiError);
    expect(error).toMatchObject({ status: 403, code: 'insufficient_scope', detail });
    expect(calls).toHaveLength(1);
  });
});

describe('approvalLink', () => {
  it("POSTs without a body to a run's or a suite run's approval-link route and gives the link", async () => {
    const link = {
      approvalUrl: 'http://api.test/view/approve/runs/run_1/key_1/abc~x',
      expires_at: '2026-12-07T11:00:00.000Z',
      pending_count: 2,
    };
    const { client, calls } = clientAnswering([() => json(200, link), () => json(200, link)]);
    await expect(client.approvalLink({ runId: 'run_1' })).resolves.toEqual(link);
    await client.approvalLink({ suiteRunId: 'srun_1' });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', 'http://api.test/api/v1/runs/run_1/visual-changes/approval-link', undefined],
      ['POST', 'http://api.test/api/v1/suite-runs/srun_1/visual-changes/approval-link', undefined],
    ]);
  });
});
