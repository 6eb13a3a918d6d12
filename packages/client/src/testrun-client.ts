import { randomUUID } from 'node:crypto';
import {
  isTerminalRunStatus,
  type Deployment,
  type DeploymentCreateRequest,
  type DeploymentDryRun,
  type DeploymentList,
  type ProjectList,
  type ProjectRunsCreated,
  type Run,
  type RunCreateRequest,
  type RunCreateResponse,
  type RunList,
  type Secret,
  type SecretList,
  type SingleRunCreated,
  type SuiteRun,
  type SuiteRunCreated,
  type SuiteRunList,
  type SuiteRunRerunRequest,
} from '@testrun/contracts';
import { parseAlternateLink, type RateLimitInfo } from './backoff';
import type {
  EnqueueOptions,
  EnqueueResult,
  RunListFilters,
  RunWithLink,
  SuiteRunListFilters,
  TestrunClientOptions,
  WaitOptions,
} from './options';
import { deploymentPath, listingQuery, secretPath } from './paths';
import { poll, type PollRead, type PollReadOptions } from './poll';
import { Transport, waited, type Cached, type RequestOptions } from './transport';

export { DEFAULT_POLL_INTERVAL_MS, DEFAULT_WAIT_TIMEOUT_MS } from './poll';

/**
 * Typed client of the Testrun HTTP API (v1). Every method speaks the contracts' types. Requests
 * are retried within bounds: GETs on network faults and 5xx; POSTs also on 409 (the same key is
 * still in flight), which is safe because every POST carries an `Idempotency-Key`; any request on
 * 429, after `Retry-After` (else jittered exponential backoff).
 */
export class TestrunClient {
  /** @internal */ readonly transport: Transport;
  /** The most recent rate-limit state the server reported, if it reports one. */
  lastRateLimit: RateLimitInfo | null = null;

  constructor(options: TestrunClientOptions) {
    this.transport = new Transport(options, (info) => {
      this.lastRateLimit = info;
    });
  }

  /** Enqueues one test: 201 `{ runId }`. */
  enqueueTest(
    testId: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, testId }, options) as Promise<EnqueueResult<SingleRunCreated>>;
  }

  /** Enqueues one suite of a project: 201 `{ suiteRunId }`. */
  enqueueSuite(
    projectSlug: string,
    suiteSlug: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, projectSlug, suiteSlug }, options) as Promise<EnqueueResult<SuiteRunCreated>>;
  }

  /** Enqueues every suite of a project: 201 `{ runIds }`. */
  enqueueProject(
    projectSlug: string,
    request: Omit<RunCreateRequest, 'testId' | 'projectSlug' | 'suiteSlug'> = {},
    options: EnqueueOptions = {},
  ) {
    return this.enqueue({ ...request, projectSlug }, options) as Promise<EnqueueResult<ProjectRunsCreated>>;
  }

  /** POST /api/v1/runs in whichever mode `request` addresses. */
  async enqueue(request: RunCreateRequest, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    return this.create<RunCreateResponse>('/api/v1/runs', request, options);
  }

  /**
   * POST /api/v1/suite-runs/:id/rerun: 201 `{ suiteRunId }` of a new suite run of the original's
   * failed and error children (`only: "failed"`) or all of them, with its base URL, headers and variables.
   */
  async rerunSuiteRun(
    suiteRunId: string,
    request: SuiteRunRerunRequest,
    options: EnqueueOptions = {},
  ): Promise<EnqueueResult<SuiteRunCreated>> {
    return this.create<SuiteRunCreated>(`/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}/rerun`, request, options);
  }

  /** A POST that creates something, under the caller's `Idempotency-Key` or a new random one. */
  private async create<T extends RunCreateResponse>(
    path: string,
    body: unknown,
    options: EnqueueOptions,
  ): Promise<EnqueueResult<T>> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const res = await this.transport.request<T>('POST', path, { body, idempotencyKey });
    return { body: res.body, idempotencyKey, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  /**
   * POST /api/v1/runs/:id/cancel: 202 with the run as it is right after (a queued run is already
   * skipped; a running one is being stopped). A cancel can be repeated, so it is retried like a GET.
   */
  async cancelRun(runId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<Run> {
    return (await this.transport.request<Run>('POST', `/api/v1/runs/${encodeURIComponent(runId)}/cancel`, options))
      .body;
  }

  /** POST /api/v1/suite-runs/:id/cancel: cancels every child; 202 with the suite run as it is right after. */
  async cancelSuiteRun(
    suiteRunId: string,
    options: { deadline?: number; signal?: AbortSignal } = {},
  ): Promise<SuiteRun> {
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}/cancel`;
    return (await this.transport.request<SuiteRun>('POST', path, options)).body;
  }

  /** GET /api/v1/runs/:id. */
  async getRun(runId: string): Promise<Run> {
    return (await this.getRunWithLink(runId)).run;
  }

  /** GET /api/v1/runs/:id, with the view link from the `Link` header. */
  async getRunWithLink(runId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<RunWithLink> {
    const { run, viewUrl } = await this.readRun(runId, options);
    return { run, viewUrl };
  }

  /** GET /api/v1/suite-runs/:id. */
  async getSuiteRun(suiteRunId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<SuiteRun> {
    return (await this.readSuiteRun(suiteRunId, options)).state;
  }

  /** GET /api/v1/projects: the workspace's projects, their suites and tests (ids, keys, names, enabled). */
  async listProjects(): Promise<ProjectList> {
    return (await this.transport.request<ProjectList>('GET', '/api/v1/projects')).body;
  }

  /** GET /api/v1/runs: one page of runs, newest first; pass `next_cursor` as `cursor` for the next. */
  async listRuns(filters: RunListFilters = {}): Promise<RunList> {
    return (await this.transport.request<RunList>('GET', `/api/v1/runs${listingQuery(filters)}`)).body;
  }

  /** GET /api/v1/suite-runs: one page of suite runs (without their per-test entries), newest first. */
  async listSuiteRuns(filters: SuiteRunListFilters = {}): Promise<SuiteRunList> {
    return (await this.transport.request<SuiteRunList>('GET', `/api/v1/suite-runs${listingQuery(filters)}`)).body;
  }

  /**
   * PUT a secret of the workspace (or of `projectSlug`): steps reference it as `{{secrets.NAME}}`.
   * Creates it or replaces its value; the answer is its name and dates, never the value. Needs a
   * key with the `deploy` scope.
   */
  async setSecret(name: string, value: string, where: SecretPlace = {}): Promise<{ secret: Secret; created: boolean }> {
    const res = await this.transport.request<Secret>('PUT', secretPath(where, name), { body: { value } });
    return { secret: res.body, created: res.status === 201 };
  }

  /** DELETE a secret of the workspace (or of `projectSlug`); a missing one is a 404 `not_found`. */
  async deleteSecret(name: string, where: SecretPlace = {}): Promise<void> {
    await this.transport.request<undefined>('DELETE', secretPath(where, name));
  }

  /** GET the secrets of the workspace (those of no project), or of `projectSlug`: names and dates only. */
  async listSecrets(where: SecretPlace = {}): Promise<SecretList> {
    return (await this.transport.request<SecretList>('GET', secretPath(where))).body;
  }

  /**
   * POST /api/v1/projects/:slug/deployments: `request.project` (the project file as JSON) as the
   * project's next version, active unless `activate` is false (a preview); `dryRun: true` stores
   * nothing. An invalid file is a 422 `invalid_project` naming each fault by JSON pointer.
   */
  async createDeployment(
    projectSlug: string,
    request: DeploymentCreateRequest,
    options: EnqueueOptions = {},
  ): Promise<{ body: Deployment | DeploymentDryRun; idempotencyKey: string; replayed: boolean }> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    const res = await this.transport.request<Deployment | DeploymentDryRun>('POST', deploymentPath(projectSlug), {
      body: request,
      idempotencyKey,
    });
    return { body: res.body, idempotencyKey, replayed: res.headers.get('idempotent-replayed') === 'true' };
  }

  /** GET /api/v1/projects/:slug/deployments: one page of the project's versions, newest first, without their tests. */
  async listDeployments(projectSlug: string, page: { limit?: number; cursor?: string } = {}): Promise<DeploymentList> {
    const path = `${deploymentPath(projectSlug)}${listingQuery(page)}`;
    return (await this.transport.request<DeploymentList>('GET', path)).body;
  }

  /** GET /api/v1/projects/:slug/deployments/:id: one version, with its tests. */
  async getDeployment(projectSlug: string, deploymentId: string): Promise<Deployment> {
    return (await this.transport.request<Deployment>('GET', deploymentPath(projectSlug, deploymentId))).body;
  }

  /**
   * POST /api/v1/projects/:slug/deployments/:id/activate: makes that version the active one (a
   * rollback or a promotion). Activating the active one changes nothing, so it is safe to repeat.
   */
  async activateDeployment(projectSlug: string, deploymentId: string): Promise<Deployment> {
    const path = `${deploymentPath(projectSlug, deploymentId)}/activate`;
    return (await this.transport.request<Deployment>('POST', path)).body;
  }

  private async readRun(
    runId: string,
    options: RequestOptions,
    cached?: Cached<Run>,
  ): Promise<RunWithLink & { waited: boolean; etag: string | null }> {
    const res = await this.transport.request<Run>('GET', `/api/v1/runs/${encodeURIComponent(runId)}`, options, cached);
    const viewUrl = parseAlternateLink(res.headers.get('link'));
    return { run: res.body, viewUrl, waited: waited(res), etag: res.headers.get('etag') };
  }

  private async readSuiteRun(
    suiteRunId: string,
    options: RequestOptions,
    cached?: Cached<SuiteRun>,
  ): Promise<PollRead<SuiteRun> & { etag: string | null }> {
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}`;
    const res = await this.transport.request<SuiteRun>('GET', path, options, cached);
    return { state: res.body, waited: waited(res), etag: res.headers.get('etag') };
  }

  /**
   * Polls a run until it is terminal; rejects with {@link TestrunWaitTimeoutError} when the budget
   * runs out. Each poll after the first sends the last answer's `ETag` as `If-None-Match`, so an
   * unchanged run costs the server no body (304).
   */
  async waitForRun(runId: string, options: WaitOptions<Run> = {}): Promise<Run> {
    let cached: Cached<Run> | undefined;
    return poll(
      this.transport.options,
      `Run ${runId}`,
      options,
      async (o) => {
        const r = await this.readRun(runId, o, cached);
        cached = r.etag ? { etag: r.etag, body: r.run } : undefined;
        return { state: r.run, waited: r.waited };
      },
      (run) => isTerminalRunStatus(run.status),
    );
  }

  /** Polls a suite run until it is terminal (every child terminal), conditionally as {@link waitForRun} does. */
  async waitForSuiteRun(suiteRunId: string, options: WaitOptions<SuiteRun> = {}): Promise<SuiteRun> {
    let cached: Cached<SuiteRun> | undefined;
    return poll(
      this.transport.options,
      `Suite run ${suiteRunId}`,
      options,
      async (o) => {
        const r = await this.readSuiteRun(suiteRunId, o, cached);
        cached = r.etag ? { etag: r.etag, body: r.state } : undefined;
        return r;
      },
      (s) => isTerminalRunStatus(s.status),
    );
  }

  /**
   * Polls a set of runs (project mode) until every one is terminal. Each round reads only the runs
   * not yet terminal, so the request count shrinks as runs finish. Results keep the order of `runIds`.
   */
  async waitForRuns(runIds: readonly string[], options: WaitOptions<Run[]> = {}): Promise<Run[]> {
    const known = new Map<string, Run>();
    // Plain polls: a long poll of each run in turn would hold the round on the first one.
    const read = async ({ deadline, signal }: PollReadOptions): Promise<PollRead<Run[]>> => {
      const runs: Run[] = [];
      for (const id of runIds) {
        let run = known.get(id);
        if (!run || !isTerminalRunStatus(run.status)) {
          run = (await this.getRunWithLink(id, { deadline, signal })).run;
          known.set(id, run);
        }
        runs.push(run);
      }
      return { state: runs, waited: false };
    };
    return poll(this.transport.options, `${runIds.length} runs`, options, read, (runs) =>
      runs.every((r) => isTerminalRunStatus(r.status)),
    );
  }
}

/** Where a secret lives: the workspace of the key, or one of its projects. */
export type SecretPlace = { projectSlug?: string };
