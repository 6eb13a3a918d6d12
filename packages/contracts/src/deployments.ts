import { Type, type Static } from '@sinclair/typebox';
import { BUNDLE_DIGEST_PATTERN } from './bundles';
import { Nullable } from './enums';
import { LISTING_LIMITS, PAGE_QUERY_FIELDS, readCursor } from './listings';
import { storableText } from './limits';
import type { ProblemCode, ProblemFieldError } from './problems';
import { compileValidator, escapePointer } from './validate';

// Deployments of a project (POST/GET /api/v1/projects/{projectSlug}/deployments): every version of
// its test definitions, one of them active. docs/API.md, "Deployments".

/** Body of POST /api/v1/projects/{projectSlug}/deployments. */
export const DeploymentCreateRequest = Type.Object(
  {
    project: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          "The project file as JSON (the same document as the YAML); its `slug` must be the path's projectSlug. Every error of it is a 422 `invalid_project` naming its JSON pointer (under /project).",
      },
    ),
    activate: Type.Optional(
      Type.Boolean({
        description:
          'true (the default): the new version becomes the active one, which runs without a deploymentId. false: a preview, run only by POST /api/v1/runs with its deploymentId.',
      }),
    ),
    dryRun: Type.Optional(
      Type.Boolean({ description: 'true: validate and answer the changes (200) without storing anything.' }),
    ),
    bundle: Type.Optional(
      Type.String({
        pattern: BUNDLE_DIGEST_PATTERN,
        description:
          'The digest of the Playwright bundle uploaded with PUT …/bundles/{digest}: required when the file has a `playwright:` section (422 `invalid_project` naming /bundle when missing or not uploaded to this workspace).',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DeploymentCreateRequest = Static<typeof DeploymentCreateRequest>;

/** A deployment request, checked: the project file itself is checked by the deployment. */
export type ParsedDeploymentRequest = { project: unknown; activate: boolean; dryRun: boolean; bundle?: string };

const validateShape = compileValidator(DeploymentCreateRequest);

/** Checks a deployment body's envelope (400 `invalid_body`); the project file is the deployment's to check. */
export function parseDeploymentCreateRequest(body: unknown):
  | { ok: true; value: ParsedDeploymentRequest }
  | {
      ok: false;
      problem: { code: Extract<ProblemCode, 'invalid_body'>; detail: string; errors: ProblemFieldError[] };
    } {
  const shape = validateShape(body);
  if (!shape.ok) {
    const listed = shape.errors.map((e) => `${e.path || 'body'} ${e.message}`).join('; ');
    const errors = shape.errors.map((e) => ({ path: storableText(e.path), message: e.message }));
    return {
      ok: false,
      problem: { code: 'invalid_body', detail: storableText(`The body is invalid: ${listed}.`), errors },
    };
  }
  const { project, activate, dryRun, bundle } = shape.value;
  const value = { project, activate: activate ?? true, dryRun: dryRun ?? false };
  return { ok: true, value: bundle === undefined ? value : { ...value, bundle } };
}

/** The errors of a project file as a deployment request names them: under /project. */
export function underProject(errors: readonly ProblemFieldError[]): ProblemFieldError[] {
  return errors.map((e) => ({ path: `/project${e.path}`, message: e.message }));
}

/** Where a Playwright test of a deployment is declared; absent for a step test. */
const DeploymentTestLocation = Type.Object(
  {
    file: Type.String({ description: 'The spec file, relative to the project file.' }),
    line: Type.Integer(),
    project: Type.String({ description: "The Playwright project it runs in ('' without projects)." }),
    titlePath: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "Describe titles then the test's title (no file, no project); absent for versions deployed before it was given.",
      }),
    ),
  },
  { additionalProperties: false, description: 'Where a Playwright test is declared; absent for a step test.' },
);

/** A test named by where it lives: its suite's slug and its key (what keeps its testId). */
export const DeploymentTestKey = Type.Object(
  {
    suiteSlug: Type.String(),
    key: Type.String(),
    name: Type.Optional(
      Type.String({
        description:
          "The test's name (a Playwright test's title path joined by ' › '); absent in changes stored before it was given.",
      }),
    ),
    location: Type.Optional(DeploymentTestLocation),
  },
  { additionalProperties: false },
);
export type DeploymentTestKey = Static<typeof DeploymentTestKey>;

export const DeploymentChanges = Type.Object(
  {
    added: Type.Array(DeploymentTestKey, { description: 'Tests the active version did not have.' }),
    removed: Type.Array(DeploymentTestKey, { description: 'Tests of the active version this one does not have.' }),
    changed: Type.Array(DeploymentTestKey, {
      description: 'Tests of both whose name, enabled, steps, timeout, evidence or retries differ.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Against the version that was active when this one was deployed (all added for the first).',
  },
);
export type DeploymentChanges = Static<typeof DeploymentChanges>;

export const DeploymentTest = Type.Object(
  {
    testId: Type.String({ description: 'Kept from version to version while the suite slug and key stay the same.' }),
    key: Type.String(),
    name: Type.String(),
    suiteSlug: Type.String(),
    enabled: Type.Boolean(),
    location: Type.Optional(DeploymentTestLocation),
  },
  { additionalProperties: false },
);
export type DeploymentTest = Static<typeof DeploymentTest>;

const Instant = (description: string) => Type.String({ format: 'date-time', description });

const deploymentFields = {
  id: Type.String({ description: '`dep_…`' }),
  project_slug: Type.String(),
  version: Type.Integer({ minimum: 1, description: '1, 2, … per project.' }),
  active: Type.Boolean({ description: 'Whether runs without a deploymentId execute this version.' }),
  created_at: Instant('When it was deployed.'),
  activated_at: Nullable(Instant('When it was last activated; null for a preview never activated.')),
  created_by: Nullable(
    Type.Object(
      { key_id: Type.String(), key_name: Type.String() },
      {
        additionalProperties: false,
        description: 'The API key that deployed it (never the key itself); null for `testrun admin project apply`.',
      },
    ),
  ),
  changes: DeploymentChanges,
  bundle: Nullable(
    Type.String({ description: 'The Playwright bundle (`sha256:…`) its tests come from; null for step tests only.' }),
  ),
  warnings: Type.Array(Type.String(), {
    description:
      "What discovery noticed and the service does not apply (a `webServer`, another @playwright/test major.minor than the service's).",
  }),
};

export const Deployment = Type.Object(
  {
    ...deploymentFields,
    tests: Type.Array(DeploymentTest, { description: "The version's tests in the project file's order." }),
  },
  { additionalProperties: false },
);
export type Deployment = Static<typeof Deployment>;

/** A deployment in a listing: without its tests. */
export const DeploymentSummary = Type.Object(deploymentFields, { additionalProperties: false });
export type DeploymentSummary = Static<typeof DeploymentSummary>;

export const DeploymentList = Type.Object(
  {
    deployments: Type.Array(DeploymentSummary, { description: 'Newest first.' }),
    next_cursor: Nullable(
      Type.String({ description: 'Pass it as `cursor` for the next (older) page; null on the last page.' }),
    ),
  },
  { additionalProperties: false },
);
export type DeploymentList = Static<typeof DeploymentList>;

/** The answer of a dry run: what the deployment would change, nothing stored. */
export const DeploymentDryRun = Type.Object(
  {
    dry_run: Type.Literal(true),
    project_slug: Type.String(),
    changes: DeploymentChanges,
    tests: Type.Array(
      Type.Object(
        {
          ...DeploymentTest.properties,
          testId: Nullable(Type.String({ description: 'null for a test not known yet.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type DeploymentDryRun = Static<typeof DeploymentDryRun>;

export const DeploymentListQuery = Type.Object({ ...PAGE_QUERY_FIELDS }, { additionalProperties: false });

/** A page of deployments, checked. */
export type DeploymentListing = { limit: number; after: { createdAt: Date; id: string } | null; filters: string };

const validateListQuery = compileValidator(DeploymentListQuery);

/** Checks the query of GET …/deployments as the other listings are checked (400 `invalid_query`). */
export function parseDeploymentListQuery(
  query: Record<string, unknown>,
): { ok: true; value: DeploymentListing } | { ok: false; errors: ProblemFieldError[] } {
  const errors: ProblemFieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (typeof value !== 'string')
      errors.push({ path: storableText(`/${escapePointer(name)}`), message: 'must be given once, as plain text' });
  }
  if (errors.length > 0) return { ok: false, errors };
  const shape = validateListQuery(query);
  if (!shape.ok) return { ok: false, errors: shape.errors };
  const limit = shape.value.limit === undefined ? LISTING_LIMITS.defaultLimit : Number(shape.value.limit);
  if (limit < 1 || limit > LISTING_LIMITS.maxLimit)
    errors.push({ path: '/limit', message: `must be between 1 and ${LISTING_LIMITS.maxLimit}` });
  const filters = JSON.stringify(['deployments']);
  const after = shape.value.cursor === undefined ? null : readCursor(shape.value.cursor, filters);
  if (after === 'invalid' || after === 'other')
    errors.push({ path: '/cursor', message: 'is not a cursor this listing gave' });
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: { limit, after: after === null || typeof after === 'string' ? null : after, filters } };
}
