import type { TSchema } from '@sinclair/typebox';
import { IdempotencyKey } from './idempotency-key';
import { PROBLEMS, Problem, ProblemDescription, type ProblemCode } from './problems';
import { ProjectList, RunList, RunListQuery, SuiteRunList, SuiteRunListQuery } from './listings';
import { SuiteRunRerunRequest } from './rerun-request';
import { ProjectRunsCreated, Run, RunCreateRequest, SingleRunCreated, SuiteRun, SuiteRunCreated } from './runs';
import { RunFinishedEvent, SuiteRunFinishedEvent } from './webhooks';

/** Strips TypeBox's symbol keys by a JSON round trip, leaving plain JSON Schema. */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const problemResponse = (...codes: ProblemCode[]) => ({
  description: codes.map((c) => `\`${c}\`: ${PROBLEMS[c].title}`).join('; '),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

const common = {
  '401': problemResponse('unauthorized'),
  '403': problemResponse('key_paused', 'key_creator_not_member'),
  '429': problemResponse('rate_limited'),
  '503': problemResponse('service_unavailable'),
};

/** A GET of one resource by its id in the path: 200 with the schema, or 404 (plus `responses`). */
function getOne(
  operationId: string,
  summary: string,
  idParameter: string,
  schema: string,
  responses: Record<string, unknown>,
) {
  return {
    get: {
      operationId,
      summary,
      parameters: [{ name: idParameter, in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': {
          description: summary,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
        },
        ...responses,
        '404': problemResponse('not_found'),
      },
    },
  };
}

/**
 * A GET of a run or a suite run made conditional: a strong `ETag` (a hash of the body), 304 for an
 * `If-None-Match` that names it, and `Prefer: wait=N` (long polling; with a matching
 * `If-None-Match`, 304 only after N seconds without a change).
 */
function conditionalGet(operation: ReturnType<typeof getOne>) {
  const { get } = operation;
  const etag = { ETag: { description: 'Strong tag of the body', schema: { type: 'string' } } };
  return {
    get: {
      ...get,
      parameters: [
        ...get.parameters,
        {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: 'An ETag of an earlier answer: 304 while the body is still that one',
          schema: { type: 'string' },
        },
        {
          name: 'Prefer',
          in: 'header',
          required: false,
          description: '`wait=N` (N ≤ 60): hold the answer until the resource changes or N seconds pass',
          schema: { type: 'string' },
        },
      ],
      responses: {
        ...get.responses,
        '200': { ...get.responses['200'], headers: etag },
        '304': { description: 'Not modified: the body is still the one If-None-Match names', headers: etag },
      },
    },
  };
}

/** A listing's query parameters, from the same schema the API checks them with. */
function queryParameters(schema: typeof RunListQuery | typeof SuiteRunListQuery) {
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = plain(property);
    return { name, in: 'query', required: false, description, schema: rest };
  });
}

/** A GET of a listing: 200 with one page, 400 for a bad query, 404 for an unknown project or suite. */
function getPage(
  operationId: string,
  summary: string,
  query: typeof RunListQuery | typeof SuiteRunListQuery,
  schema: string,
) {
  return {
    get: {
      operationId,
      summary,
      parameters: queryParameters(query),
      responses: {
        '200': {
          description: 'One page, newest first',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
        },
        '400': problemResponse('invalid_query'),
        ...common,
        '404': problemResponse('not_found'),
      },
    },
  };
}

/** The OpenAPI 3.1 document of API v1, generated from the same schemas the API validates with. */
/** An event the service sends, signed per Standard Webhooks; any 2xx answer acknowledges it. */
function webhook(summary: string, schema: string) {
  const header = (description: string) => ({ required: true, schema: { type: 'string' }, description });
  return {
    post: {
      summary,
      parameters: [
        { name: 'webhook-id', in: 'header', ...header('The message id: the same on every retry.') },
        { name: 'webhook-timestamp', in: 'header', ...header('Seconds since the epoch when this attempt was signed.') },
        {
          name: 'webhook-signature',
          in: 'header',
          ...header('`v1,` and the base64 HMAC-SHA256 of id.timestamp.body.'),
        },
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
      },
      responses: { '2XX': { description: 'Delivered; any other answer, or none within 10 s, is retried.' } },
      security: [],
    },
  };
}

export function buildOpenApiDocument(serverUrl = '/'): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Testrun API',
      version: '1.0.0',
      description:
        'Enqueue browser test runs and poll for their results. Every resource is scoped to the workspace of the API key.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key of the workspace.' } },
      schemas: {
        RunCreateRequest: plain(RunCreateRequest),
        SingleRunCreated: plain(SingleRunCreated),
        SuiteRunCreated: plain(SuiteRunCreated),
        ProjectRunsCreated: plain(ProjectRunsCreated),
        Run: plain(Run),
        SuiteRun: plain(SuiteRun),
        RunList: plain(RunList),
        SuiteRunList: plain(SuiteRunList),
        ProjectList: plain(ProjectList),
        Problem: plain(Problem),
        ProblemDescription: plain(ProblemDescription),
        SuiteRunRerunRequest: plain(SuiteRunRerunRequest),
        RunFinishedEvent: plain(RunFinishedEvent),
        SuiteRunFinishedEvent: plain(SuiteRunFinishedEvent),
      },
    },
    // What the service POSTs to a workspace's webhook endpoints (docs/WEBHOOKS.md).
    webhooks: {
      'run.finished': webhook('A run reached a terminal status', 'RunFinishedEvent'),
      'suite_run.finished': webhook('A suite run reached a terminal status', 'SuiteRunFinishedEvent'),
    },
    paths: {
      '/api/v1/runs': {
        ...getPage('listRuns', "List the workspace's runs, newest first", RunListQuery, 'RunList'),
        post: {
          operationId: 'createRuns',
          summary: 'Enqueue one test, one suite or every suite of a project',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: plain(IdempotencyKey),
            },
          ],
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/RunCreateRequest' } } },
          },
          responses: {
            '201': {
              description: 'Runs recorded and enqueued. The body depends on the mode.',
              content: {
                'application/json': {
                  schema: {
                    oneOf: [
                      { $ref: '#/components/schemas/SingleRunCreated' },
                      { $ref: '#/components/schemas/SuiteRunCreated' },
                      { $ref: '#/components/schemas/ProjectRunsCreated' },
                    ],
                  },
                },
              },
            },
            '400': problemResponse('invalid_body', 'both_test_and_project', 'suite_without_project'),
            ...common,
            '404': problemResponse('not_found'),
            '409': problemResponse('idempotency_request_in_progress'),
            '413': problemResponse('payload_too_large'),
            '415': problemResponse('unsupported_media_type'),
            '422': problemResponse(
              'plan_limit_exceeded',
              'empty_suite',
              'target_not_allowed',
              'idempotency_key_reused',
              'too_many_runs',
              'limit_exceeded',
            ),
          },
        },
      },
      '/api/v1/runs/{runId}': conditionalGet(getOne('getRun', 'Get a run', 'runId', 'Run', common)),
      '/api/v1/suite-runs/{suiteRunId}': conditionalGet(
        getOne(
          'getSuiteRun',
          'Get a suite run with its counters and one entry per child test',
          'suiteRunId',
          'SuiteRun',
          common,
        ),
      ),
      '/api/v1/suite-runs': getPage(
        'listSuiteRuns',
        "List the workspace's suite runs, newest first, without their per-test entries",
        SuiteRunListQuery,
        'SuiteRunList',
      ),
      '/api/v1/projects': {
        get: {
          operationId: 'listProjects',
          summary: "The workspace's projects with their suites and tests (ids, keys, names, enabled)",
          responses: {
            '200': {
              description: 'Every project of the workspace, by slug',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/ProjectList' } } },
            },
            ...common,
          },
        },
      },
      ...lifecyclePaths(),
      '/api/v1/problems/{code}': {
        get: {
          ...getOne('getProblem', 'What a problem code means (needs no API key)', 'code', 'ProblemDescription', {}).get,
          security: [],
        },
      },
    },
  };
}

/** A path parameter holding an id. */
const idParameter = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });

/** A cancel: 202 with the resource as it is right after, 404 for an id of another workspace. */
function cancelPath(operationId: string, summary: string, idName: string, schema: string) {
  return {
    post: {
      operationId,
      summary,
      description:
        'Queued runs end `skipped` with skip_reason `cancelled` at once; running runs are stopped by their worker within seconds and end `error` with error.code `cancelled`; terminal runs are left as they are. Safe to repeat. No body.',
      parameters: [idParameter(idName)],
      responses: {
        '202': {
          description: 'Cancel accepted; the body is the resource right after it',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
        },
        ...common,
        '404': problemResponse('not_found'),
      },
    },
  };
}

/** Cancel of a run and of a suite run, and rerun of a suite run. */
function lifecyclePaths() {
  return {
    '/api/v1/runs/{runId}/cancel': cancelPath('cancelRun', 'Cancel a run', 'runId', 'Run'),
    '/api/v1/suite-runs/{suiteRunId}/cancel': cancelPath(
      'cancelSuiteRun',
      'Cancel every run of a suite run',
      'suiteRunId',
      'SuiteRun',
    ),
    '/api/v1/suite-runs/{suiteRunId}/rerun': {
      post: {
        operationId: 'rerunSuiteRun',
        summary: 'Enqueue a new suite run of the failed and error (or all) tests of a finished suite run',
        description:
          "The new suite run names the original in `rerun_of`, and runs against the original's base URL with its headers and variables, taken from a sealed copy the original keeps for 24 hours; after that the request must give them again (422 `rerun_secrets_expired` names each field). Plan limits and Idempotency-Key apply as for POST /api/v1/runs.",
        parameters: [
          idParameter('suiteRunId'),
          { name: 'Idempotency-Key', in: 'header', required: false, schema: plain(IdempotencyKey) },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/SuiteRunRerunRequest' } } },
        },
        responses: {
          '201': {
            description: 'The new suite run, recorded and enqueued',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/SuiteRunCreated' } } },
          },
          '400': problemResponse('invalid_body'),
          ...common,
          '404': problemResponse('not_found'),
          '409': problemResponse('suite_run_not_finished', 'idempotency_request_in_progress'),
          '413': problemResponse('payload_too_large'),
          '415': problemResponse('unsupported_media_type'),
          '422': problemResponse(
            'rerun_secrets_expired',
            'empty_suite',
            'plan_limit_exceeded',
            'target_not_allowed',
            'idempotency_key_reused',
            'limit_exceeded',
          ),
        },
      },
    },
  };
}
