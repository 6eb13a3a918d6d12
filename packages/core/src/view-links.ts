import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from './db';
import type { CommonConfig } from './env';
import { signViewToken, verifyViewToken, type ViewSubject } from './secrets/seal';

/** What a link to the view is made with: the deployment's address and how long links live. */
export type ViewLinkConfig = Pick<CommonConfig, 'publicBaseUrl' | 'viewLinkTtlDays'>;

/** What a view link is checked against: its subject's creation time and its link version. */
export type ViewLinkState = { createdAt: Date; version: number };

/**
 * A link's terms, signed into its token: when its lifetime began (its subject's creation; a page's
 * links carry the start of the link the page was opened with) and which link version it belongs to.
 * How long it lasts is not signed: it is the VIEW_LINK_TTL_DAYS the link is checked with.
 */
export type ViewLinkTerms = { issuedAt: Date; version: number };

const DAY_MS = 86_400_000;

function mac(key: Buffer, subject: ViewSubject, id: string, sec: number, version: number, form: '.' | '~'): string {
  // The form is signed too: an expiring token's expiry can never be read as an issue time.
  const input = form === '~' ? `${subject}:${id}:issued:${sec}:${version}` : `${subject}:${id}:${sec}:${version}`;
  return createHmac('sha256', key).update(input).digest('base64url').slice(0, 32);
}

/** When a link whose lifetime began at `from` expires, VIEW_LINK_TTL_DAYS being `ttlDays`. */
export function viewLinkExpiry(ttlDays: number, from: Date = new Date()): Date {
  return new Date(from.getTime() + ttlDays * DAY_MS);
}

/**
 * A view link's token: the start of its lifetime (epoch seconds, base 36), a tilde, and 32 url-safe
 * characters of an HMAC of the subject, id, that time and the link version. Bumping the version
 * revokes every link; lowering VIEW_LINK_TTL_DAYS shortens every link, those handed out already too.
 */
export function signViewLink(key: Buffer, subject: ViewSubject, id: string, terms: ViewLinkTerms): string {
  const issuedSec = Math.floor(terms.issuedAt.getTime() / 1000);
  return `${issuedSec.toString(36)}~${mac(key, subject, id, issuedSec, terms.version, '~')}`;
}

function macMatches(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)];
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The terms of a valid token, or null: a wrong, expired or revoked token alike. A token is valid
 * until `ttlDays` (the current VIEW_LINK_TTL_DAYS) after the start it carries. Tokens of the two
 * older forms are honoured until their subject is `ttlDays` old, unless the links were revoked:
 * one that carries its expiry (`<expiry>.<mac>`, signed with the TTL of its day) also until that
 * expiry, one of the HMAC alone only at version 0.
 */
export function checkViewLink(
  key: Buffer,
  subject: ViewSubject,
  id: string,
  token: string,
  state: ViewLinkState,
  ttlDays: number,
  now: Date = new Date(),
): ViewLinkTerms | null {
  const sinceCreation: ViewLinkTerms = { issuedAt: state.createdAt, version: state.version };
  const createdLive = viewLinkExpiry(ttlDays, state.createdAt) > now;
  const sep = token.search(/[.~]/);
  if (sep === -1) {
    const valid = state.version === 0 && createdLive && verifyViewToken(key, subject, id, token);
    return valid ? sinceCreation : null;
  }
  const form = token[sep] === '~' ? '~' : '.';
  const sec = Number.parseInt(token.slice(0, sep), 36);
  if (!Number.isSafeInteger(sec)) return null;
  if (!macMatches(token.slice(sep + 1), mac(key, subject, id, sec, state.version, form))) return null;
  if (form === '.') return sec * 1000 > now.getTime() && createdLive ? sinceCreation : null;
  const issuedAt = new Date(sec * 1000);
  return viewLinkExpiry(ttlDays, issuedAt) > now ? { issuedAt, version: state.version } : null;
}

/** The link state of a suite run or run (a run in a suite run has its suite run's version), or null. */
export async function loadViewLinkState(db: Db, subject: ViewSubject, id: string): Promise<ViewLinkState | null> {
  if (subject === 'suite-run') {
    const row = await db.suiteRun.findUnique({ where: { id }, select: { createdAt: true, viewTokenVersion: true } });
    return row ? { createdAt: row.createdAt, version: row.viewTokenVersion } : null;
  }
  const row = await db.run.findUnique({
    where: { id },
    select: { createdAt: true, viewTokenVersion: true, suiteRun: { select: { viewTokenVersion: true } } },
  });
  return row ? { createdAt: row.createdAt, version: row.suiteRun?.viewTokenVersion ?? row.viewTokenVersion } : null;
}

/** The terms of the links to a subject: their lifetime begins when it was created. */
export function viewLinkTerms(state: ViewLinkState): ViewLinkTerms {
  return { issuedAt: state.createdAt, version: state.version };
}

function viewToken(viewKey: Buffer, subject: ViewSubject, id: string, terms: ViewLinkTerms | undefined): string {
  return terms ? signViewLink(viewKey, subject, id, terms) : signViewToken(viewKey, subject, id);
}

/**
 * The link for people to a suite run's detailed view (a capability URL: no API key needed). Without
 * `terms` the token is of the older form, honoured until the subject is VIEW_LINK_TTL_DAYS old.
 */
export function suiteRunViewUrl(
  publicBaseUrl: string,
  viewKey: Buffer,
  suiteRunId: string,
  terms?: ViewLinkTerms,
): string {
  return `${publicBaseUrl}/view/suite-runs/${encodeURIComponent(suiteRunId)}/${viewToken(viewKey, 'suite-run', suiteRunId, terms)}`;
}

/** The link to one run's detailed view; the suite page links to it, and it serves single-test runs. */
export function runViewUrl(publicBaseUrl: string, viewKey: Buffer, runId: string, terms?: ViewLinkTerms): string {
  return `${publicBaseUrl}/view/runs/${encodeURIComponent(runId)}/${viewToken(viewKey, 'run', runId, terms)}`;
}

/**
 * Revokes every view link of a suite run and of its runs (`testrun admin suite-run revoke-links`):
 * links made afterwards work. False when there is no such suite run.
 */
export async function revokeViewLinks(db: Db, suiteRunId: string): Promise<boolean> {
  const { count } = await db.suiteRun.updateMany({
    where: { id: suiteRunId },
    data: { viewTokenVersion: { increment: 1 } },
  });
  return count === 1;
}

/** What {@link revokeRunViewLinks} did. */
export type RunLinksRevoked =
  | { revoked: true }
  | { revoked: false; reason: 'missing' }
  | { revoked: false; reason: 'in_suite_run'; suiteRunId: string };

/**
 * Revokes every view link of a run outside a suite run (`testrun admin run revoke-links`): links
 * made afterwards work. A run in a suite run shares its suite run's links (the suite page links to
 * it), so they are revoked together, through the suite run: this one is refused and says which.
 */
export async function revokeRunViewLinks(db: Db, runId: string): Promise<RunLinksRevoked> {
  const { count } = await db.run.updateMany({
    where: { id: runId, suiteRunId: null },
    data: { viewTokenVersion: { increment: 1 } },
  });
  if (count === 1) return { revoked: true };
  const row = await db.run.findUnique({ where: { id: runId }, select: { suiteRunId: true } });
  return row?.suiteRunId
    ? { revoked: false, reason: 'in_suite_run', suiteRunId: row.suiteRunId }
    : { revoked: false, reason: 'missing' };
}
