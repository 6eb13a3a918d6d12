import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentDryRun,
  DeploymentList,
  ProjectList,
  ProjectRunsCreated,
  Run,
  RunCreateRequest,
  RunCreateResponse,
  RunList,
  Secret,
  SecretList,
  SingleRunCreated,
  SuiteRun,
  SuiteRunCreated,
  SuiteRunList,
  SuiteRunRerunRequest,
  VisualApproval,
  VisualApprovalLink,
  VisualApprovalRequest,
} from '@testrun/contracts';
import type { RateLimitInfo } from './backoff';
import { createIdempotently } from './idempotent-create';
import type {
  EnqueueOptions,
  EnqueueResult,
  RunListFilters,
  RunWithLink,
  SuiteRunListFilters,
  TestrunClientOptions,
  VisualTarget,
  WaitOptions,
} from './options';
import { deploymentPath, listingQuery, secretPath, visualApprovalPath } from './paths';
import { readRun, readSuiteRun } from './run-reads';
import * as waits from './run-waits';
import { Transport } from './transport';

export { DEFAULT_POLL_INTERVAL_MS, DEFAULT_WAIT_TIMEOUT_MS } from './poll';

/**
 * Typed client of the Testrun HTTP API (v1). Every method speaks the contracts' types. Requests
 * are retried within bounds: GETs on network faults and 5xx; POSTs also on 409 (the same key is
 * still in flight), which is safe because every POST carries an `Idempotency-Key`; any request on
 * 429, after `Retry-After` (else jittered exponential backoff).
 *
 * One method per endpoint, each naming its URL; the parts with more to them live beside it: the
 * HTTP and its retries in `transport.ts`, keyed creation in `idempotent-create.ts`, the
 * conditional reads of runs in `run-reads.ts`, and the waits in `run-waits.ts`.
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
    return createIdempotently<RunCreateResponse>(this.transport, '/api/v1/runs', request, options);
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
    const path = `/api/v1/suite-runs/${encodeURIComponent(suiteRunId)}/rerun`;
    return createIdempotently<SuiteRunCreated>(this.transport, path, request, options);
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

  /**
   * POST /api/v1/runs/:id/visual-changes/approve (or a suite run's, for every run of it): makes each
   * change not yet approved (only those of `ids`, when given) the baseline of its snapshot in the
   * deployment its run ran. Needs a key with the `preview` scope, and `deploy` when a change is of
   * the project's active deployment (403 `insufficient_scope`). Approving again approves nothing
   * more, so it is retried like a GET.
   */
  async approveVisualChanges(target: VisualTarget, ids?: readonly string[]): Promise<VisualApproval> {
    const body: VisualApprovalRequest = ids === undefined ? {} : { ids: [...ids] };
    return (await this.transport.request<VisualApproval>('POST', visualApprovalPath(target), { body })).body;
  }

  /**
   * POST /api/v1/runs/:id/visual-changes/approval-link (or a suite run's): a link, for an hour, to a
   * page that approves the changes in the browser as this key (docs/VISUAL.md). The same scopes as
   * approving. A capability: never log it. Issuing changes nothing, so it is retried like a GET.
   */
  async approvalLink(target: VisualTarget): Promise<VisualApprovalLink> {
    const path = visualApprovalPath(target, 'approval-link');
    return (await this.transport.request<VisualApprovalLink>('POST', path, {})).body;
  }

  /** GET /api/v1/runs/:id. */
  async getRun(runId: string): Promise<Run> {
    return (await this.getRunWithLink(runId)).run;
  }

  /** GET /api/v1/runs/:id, with the view link from the `Link` header. */
  async getRunWithLink(runId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<RunWithLink> {
    const { run, viewUrl } = await readRun(this.transport, runId, options);
    return { run, viewUrl };
  }

  /** GET /api/v1/suite-runs/:id. */
  async getSuiteRun(suiteRunId: string, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<SuiteRun> {
    return (await readSuiteRun(this.transport, suiteRunId, options)).state;
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
    const path = deploymentPath(projectSlug);
    return createIdempotently<Deployment | DeploymentDryRun>(this.transport, path, request, options);
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

  /**
   * Polls a run until it is terminal; rejects with {@link TestrunWaitTimeoutError} when the budget
   * runs out. Each poll after the first sends the last answer's `ETag` as `If-None-Match`, so an
   * unchanged run costs the server no body (304).
   */
  async waitForRun(runId: string, options: WaitOptions<Run> = {}): Promise<Run> {
    return waits.waitForRun(this.transport, runId, options);
  }

  /** Polls a suite run until it is terminal (every child terminal), conditionally as {@link waitForRun} does. */
  async waitForSuiteRun(suiteRunId: string, options: WaitOptions<SuiteRun> = {}): Promise<SuiteRun> {
    return waits.waitForSuiteRun(this.transport, suiteRunId, options);
  }

  /**
   * Polls a set of runs (project mode) until every one is terminal. Each round reads only the runs
   * not yet terminal, so the request count shrinks as runs finish. Results keep the order of `runIds`.
   */
  async waitForRuns(runIds: readonly string[], options: WaitOptions<Run[]> = {}): Promise<Run[]> {
    return waits.waitForRuns(this.transport, runIds, options);
  }
}

/** Where a secret lives: the workspace of the key, or one of its projects. */
export type SecretPlace = { projectSlug?: string };
