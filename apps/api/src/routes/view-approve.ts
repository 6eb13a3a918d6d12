import express, { type Request, type Response, type Router } from 'express';
import type { ViewSubject } from '@testrun/core/secrets';
import { loadViewLinkState, signViewLink, viewLinkTerms } from '@testrun/core/view-links';
import { checkApprovalLink, type ApprovalGrant } from '@testrun/core/visual';
import { ApiError } from '../errors';
import { readKeyById, type AuthContext } from '../services/auth';
import { approveVisual } from '../services/visual';
import { loadApprovalRuns, loadApprovalSubject } from '../view/data/approval';
import { APPROVAL_PAGE_POLICY, ID_SHAPE, paths, sendNotFound, sendPage, type ViewDeps } from '../view/http';
import type { LinkSigner } from '../view/model';
import { renderApprovalPage } from '../view/render/approve-page';
import { messagePage, runPath, suitePath } from '../view/render/layout';

// Approval links' pages (docs/VISUAL.md, "Approve in the view"): GET shows a run's or a suite
// run's visual changes with approve buttons, POST approves the changes a button names, as the API
// key the link was issued to, with that key's scopes as they are now. A view link never reaches
// here: the token is checked against the approval key, the grant (subject, id, key) and the
// subject's link version, and an unknown, wrong, expired or revoked link is the view's one 404.

const KINDS: Record<string, ViewSubject> = { runs: 'run', 'suite-runs': 'suite-run' };

/** A change id as the API's approval takes one (`vis_…`, at most 64 characters). */
const CHANGE_ID = /^[a-z]{2,5}_[0-9A-Za-z_]{1,58}$/;

/** The most changes one form approves: the API's limit for one request. */
const MAX_FORM_CHANGES = 1000;

/** A checked approval link: what it grants, its key, when it expires, and its subject's title and link terms. */
type Approval = {
  grant: ApprovalGrant;
  key: AuthContext;
  keyName: string;
  expiresAt: Date;
  title: string;
  /** The subject's view link state: the runs' images are linked under its read-only links. */
  state: { createdAt: Date; version: number };
};

/** The grant of a well-formed, valid approval link whose key may still approve, else null (a 404). */
async function checkApproval(deps: ViewDeps, req: Request): Promise<Approval | 'key-refused' | null> {
  const { kind, id, keyId, token } = req.params;
  const subject = typeof kind === 'string' ? KINDS[kind] : undefined;
  if (!subject || typeof id !== 'string' || typeof keyId !== 'string' || typeof token !== 'string') return null;
  if (!ID_SHAPE.test(id) || !ID_SHAPE.test(keyId)) return null;
  const state = await loadViewLinkState(deps.db, subject, id);
  if (!state) return null;
  const grant = { subject, id, keyId };
  const expiresAt = checkApprovalLink(deps.keys.approval, grant, token, state.version);
  if (!expiresAt) return null;
  const row = await loadApprovalSubject(deps.db, subject, id);
  const key = await readKeyById(deps.db, keyId).catch((e: unknown) => {
    if (e instanceof ApiError) return null;
    throw e;
  });
  // A key of another workspace never was issued a link to this subject: the link is not one of ours.
  if (!row || (key && key.auth.workspaceId !== row.workspaceId)) return null;
  if (!key || !key.auth.scopes.includes('preview')) return 'key-refused';
  const named = await deps.db.apiKey.findUnique({ where: { id: keyId }, select: { name: true } });
  return { grant, key: key.auth, keyName: named?.name ?? keyId, expiresAt, title: row.title, state };
}

/** A signer of the view's read-only links to the subject's runs (their images), with the subject's terms. */
function viewSigner(deps: ViewDeps, approval: Approval): LinkSigner {
  const terms = viewLinkTerms(approval.state);
  return (subject, linked) => signViewLink(deps.keys.view, subject, linked, terms);
}

function refusedPage(req: Request, res: Response, text: string): void {
  sendPage(res, 403, messagePage(paths(req), 'This link cannot approve', text));
}

const KEY_REFUSED =
  'The API key this link was issued to can no longer approve (it was revoked, paused, or lost the preview scope). Ask for a new link with a key that may approve.';

async function showPage(deps: ViewDeps, req: Request, res: Response): Promise<void> {
  const approval = await checkApproval(deps, req);
  if (approval === null) return sendNotFound(req, res);
  if (approval === 'key-refused') return refusedPage(req, res, KEY_REFUSED);
  const { grant } = approval;
  const sign = viewSigner(deps, approval);
  const { runs, leftOff } = await loadApprovalRuns(deps, sign, grant);
  const p = paths(req);
  const viewed = { id: grant.id, token: sign(grant.subject, grant.id) };
  const approved = typeof req.query.approved === 'string' ? Number.parseInt(req.query.approved, 10) : Number.NaN;
  const body = renderApprovalPage(p, {
    subject: grant.subject,
    id: grant.id,
    title: grant.subject === 'run' ? approval.title : `${approval.title} · ${grant.id}`,
    keyName: approval.keyName,
    expiresAt: approval.expiresAt,
    runs,
    leftOff,
    action: `${p.base}${req.path}`,
    viewPath: grant.subject === 'run' ? runPath(p, viewed) : suitePath(p, viewed),
    approved: Number.isSafeInteger(approved) && approved >= 0 ? approved : null,
  });
  sendPage(res, 200, body, APPROVAL_PAGE_POLICY);
}

/**
 * Whether a form's request may come from a page of this origin, as far as the browser says: its
 * Sec-Fetch-Site, else its Origin (`null` under the view's no-referrer policy tells nothing). The
 * link's token is what authorizes; this refuses a form another site was handed the link for.
 */
function sameOrigin(req: Request): boolean {
  const site = req.get('Sec-Fetch-Site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = req.get('Origin');
  if (origin === undefined || origin === 'null') return true;
  try {
    return new URL(origin).host === req.get('host');
  } catch {
    return false;
  }
}

/** The change ids a form names: one or many `change` fields, each a change id; null when malformed. */
function formChanges(body: unknown): string[] | null {
  const raw: unknown = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).change : undefined;
  const list = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : null;
  if (!list || list.length === 0 || list.length > MAX_FORM_CHANGES) return null;
  return list.every((v): v is string => typeof v === 'string' && CHANGE_ID.test(v)) ? list : null;
}

async function approve(deps: ViewDeps, req: Request, res: Response): Promise<void> {
  const approval = await checkApproval(deps, req);
  if (approval === null) return sendNotFound(req, res);
  if (approval === 'key-refused') return refusedPage(req, res, KEY_REFUSED);
  if (!sameOrigin(req)) return refusedPage(req, res, 'An approval is sent from its own page only.');
  const ids = formChanges(req.body);
  if (!ids)
    return sendPage(res, 400, messagePage(paths(req), 'Nothing to approve', 'The form named no change to approve.'));
  const { grant, key } = approval;
  const target = grant.subject === 'run' ? { run: grant.id } : { suiteRun: grant.id };
  try {
    const done = await approveVisual(deps.db, key, target, ids);
    res.redirect(303, `${paths(req).base}${req.path}?approved=${done.approved.length}`);
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 'insufficient_scope') throw e;
    refusedPage(
      req,
      res,
      `A change of the project's active version changes what every later run compares against: approving it needs a key with the "deploy" scope, and the key this link was issued to (${approval.keyName}) does not have it. Nothing was approved.`,
    );
  }
}

/** The approval pages and their forms, under the view's router. */
export function approvalRoutes(router: Router, deps: ViewDeps): void {
  const route = '/approve/:kind/:id/:keyId/:token';
  router.get(route, (req, res) => showPage(deps, req, res));
  router.post(
    route,
    express.urlencoded({ extended: false, limit: '128kb', parameterLimit: MAX_FORM_CHANGES + 10 }),
    (req, res) => approve(deps, req, res),
  );
}
