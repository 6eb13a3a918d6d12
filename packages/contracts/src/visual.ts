import { Type, type Static } from '@sinclair/typebox';
import { storableText } from './limits';
import type { ProblemFieldError } from './problems';
import { compileValidator } from './validate';

// Visual comparison (docs/VISUAL.md): what a run found of its snapshots (`toHaveScreenshot`,
// `toMatchSnapshot`) against the baselines the service keeps, and the approval of what it found.

/** What a run found of one snapshot: no baseline yet (`new`) or a difference from it (`changed`). */
export const VISUAL_CHANGE_KINDS = ['new', 'changed'] as const;
export type VisualChangeKind = (typeof VISUAL_CHANGE_KINDS)[number];

/** One snapshot a run found new or changed, and whether someone approved it as the baseline. */
export const VisualChange = Type.Object(
  {
    id: Type.String({ description: 'The change (`vis_…`): approve it by this id.' }),
    name: Type.String({
      description:
        "The snapshot's name as Playwright attaches it, or an `expectScreenshot` step's name with `.png` (`home.png`).",
    }),
    path: Type.String({
      description:
        "The baseline's path: a Playwright snapshot's in the bundle, where the project's snapshotPathTemplate puts it (`tests/home.spec.ts-snapshots/home-chromium-linux.png`); a step test's `expectScreenshot` `/steps/<suite slug>/<test key>/<name>.png`.",
    }),
    kind: Type.Union([Type.Literal('new'), Type.Literal('changed')], {
      description:
        "`new`: there was no baseline; the image became the deployment's baseline, awaiting approval, and the assertion passed. `changed`: it differs from the baseline; the run failed `screenshot_changed`.",
    }),
    approved: Type.Boolean({ description: 'Whether the image was approved as the baseline.' }),
    approved_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    approved_by: Type.Union([Type.String(), Type.Null()], {
      description: 'The name of the API key that approved it; null until approved.',
    }),
  },
  { additionalProperties: false },
);
export type VisualChange = Static<typeof VisualChange>;

/** A run's `visual_changes`: optional, absent when the run found none. */
export const RunVisualChanges = Type.Optional(
  Type.Array(VisualChange, {
    description:
      "The snapshots the run's last attempt found without a baseline or different from it (docs/VISUAL.md), by path; absent when none.",
  }),
);

/**
 * A suite run's visual changes not yet approved, by kind (properties of the suite run, so of the
 * `suite_run.finished` webhook too): absent when none of its runs found any, 0 once all are approved.
 */
export const SuiteRunVisualCounts = {
  visual_new_count: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'Snapshots its runs found without a baseline (`new`: the run passed, the image is the baseline awaiting approval) not yet approved; absent when its runs found no visual change.',
    }),
  ),
  visual_changed_count: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'Snapshots its runs found different from their baseline (`changed`: the run failed `screenshot_changed`) not yet approved; absent when its runs found no visual change.',
    }),
  ),
};

/** The body of an approval: the changes to approve, or every one not yet approved when absent. */
export const VisualApprovalRequest = Type.Object(
  {
    ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 1000,
        description: 'The changes (`vis_…`) to approve; absent: every change of the run or suite run not yet approved.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type VisualApprovalRequest = Static<typeof VisualApprovalRequest>;

/** What an approval did. */
export const VisualApproval = Type.Object(
  {
    approved: Type.Array(VisualChange, {
      description: 'The changes this request approved, now baselines of the deployment each run ran.',
    }),
    deployments: Type.Array(Type.String(), {
      description:
        "The deployments (`dep_…`) whose baselines changed: a preview's, or the active one's (the project's).",
    }),
  },
  { additionalProperties: false },
);
export type VisualApproval = Static<typeof VisualApproval>;

/** A link that approves in the view (POST …/visual-changes/approval-link). */
export const VisualApprovalLink = Type.Object(
  {
    approvalUrl: Type.String({
      format: 'uri',
      description:
        'The page of the changes with their approve buttons. A capability for the key that asked for it: give it to no one.',
    }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the link stops working (an hour after it was issued).',
    }),
    pending_count: Type.Integer({
      minimum: 0,
      description: 'How many changes of the run or suite run await approval now.',
    }),
  },
  { additionalProperties: false },
);
export type VisualApprovalLink = Static<typeof VisualApprovalLink>;

const validateApproval = compileValidator(VisualApprovalRequest);

/** Checks an approval's body: 400 `invalid_body` naming every field at fault. */
export function parseVisualApproval(
  body: unknown,
):
  | { ok: true; value: VisualApprovalRequest }
  | { ok: false; problem: { code: 'invalid_body'; detail: string; errors: ProblemFieldError[] } } {
  const shape = validateApproval(body ?? {});
  if (shape.ok) return { ok: true, value: shape.value };
  const listed = shape.errors.map((e) => `${e.path || 'body'} ${e.message}`).join('; ');
  return {
    ok: false,
    problem: { code: 'invalid_body', detail: storableText(`The body is invalid: ${listed}.`), errors: shape.errors },
  };
}
