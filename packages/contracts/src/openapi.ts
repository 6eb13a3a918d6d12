import { API_SCHEMAS } from './route-declaration';
import { buildOpenApiPaths, plain } from './openapi-paths';

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

/**
 * The OpenAPI 3.1 document of API v1: its paths built from the route declarations the API serves
 * (api-routes.ts), its schemas the same the API validates with.
 */
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
      schemas: Object.fromEntries(Object.entries(API_SCHEMAS).map(([name, schema]) => [name, plain(schema)])),
    },
    // What the service POSTs to a workspace's webhook endpoints (docs/WEBHOOKS.md).
    webhooks: {
      'run.finished': webhook('A run reached a terminal status', 'RunFinishedEvent'),
      'suite_run.finished': webhook('A suite run reached a terminal status', 'SuiteRunFinishedEvent'),
    },
    paths: buildOpenApiPaths(),
  };
}
