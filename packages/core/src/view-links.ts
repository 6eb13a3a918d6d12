import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Db } from './db';
import type { CommonConfig } from './env';
import { signViewToken, verifyViewToken, type ViewSubject } from './secrets';

/** What a link to the view is made with: the deployment's address and how long links live. */
export type ViewLinkConfig = Pick<CommonConfig, 'publicBaseUrl' | 'viewLinkTtlDays'>;

/** What a view link is checked against: its subject's creation time and its suite run's link version. */
export type ViewLinkState = { createdAt: Date; version: number };

/** A link's terms, signed into its token: when it expires and which link version it belongs to. */
export type ViewLinkTerms = { expiresAt: Date; version: number };

const DAY_MS = 86_400_000;

function mac(key: Buffer, subject: ViewSubject, id: string, expSec: number, version: number): string {
  return createHmac('sha256', key).update(`${subject}:${id}:${expSec}:${version}`).digest('base64url').slice(0, 32);
}

/** When a link made now expires. */
export function viewLinkExpiry(ttlDays: number, now: Date = new Date()): Date {
  return new Date(now.getTime() + ttlDays * DAY_MS);
}

/**
 * A view link's token: its expiry (epoch seconds, base 36), a dot, and 32 url-safe characters of
 * an HMAC of the subject, id, expiry and link version. Bumping the version revokes every link.
 */
export function signViewLink(key: Buffer, subject: ViewSubject, id: string, terms: ViewLinkTerms): string {
  const expSec = Math.floor(terms.expiresAt.getTime() / 1000);
  return `${expSec.toString(36)}.${mac(key, subject, id, expSec, terms.version)}`;
}

/**
 * The terms of a valid token, or null: a wrong, expired or revoked token alike. A token of the
 * older form (the HMAC alone, no expiry) is honoured until its subject is `ttlDays` old, unless the
 * links were revoked.
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
  const dot = token.indexOf('.');
  if (dot === -1) {
    const expiresAt = viewLinkExpiry(ttlDays, state.createdAt);
    const valid = state.version === 0 && expiresAt > now && verifyViewToken(key, subject, id, token);
    return valid ? { expiresAt, version: 0 } : null;
  }
  const expSec = Number.parseInt(token.slice(0, dot), 36);
  if (!Number.isSafeInteger(expSec) || expSec * 1000 <= now.getTime()) return null;
  const expected = Buffer.from(mac(key, subject, id, expSec, state.version));
  const given = Buffer.from(token.slice(dot + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return { expiresAt: new Date(expSec * 1000), version: state.version };
}

/** The link state of a suite run or run (a run outside a suite run has version 0), or null. */
export async function loadViewLinkState(db: Db, subject: ViewSubject, id: string): Promise<ViewLinkState | null> {
  if (subject === 'suite-run') {
    const row = await db.suiteRun.findUnique({ where: { id }, select: { createdAt: true, viewTokenVersion: true } });
    return row ? { createdAt: row.createdAt, version: row.viewTokenVersion } : null;
  }
  const row = await db.run.findUnique({
    where: { id },
    select: { createdAt: true, suiteRun: { select: { viewTokenVersion: true } } },
  });
  return row ? { createdAt: row.createdAt, version: row.suiteRun?.viewTokenVersion ?? 0 } : null;
}

/** The terms of the links to a subject: they expire `ttlDays` after it was created. */
export function viewLinkTerms(state: ViewLinkState, ttlDays: number): ViewLinkTerms {
  return { expiresAt: viewLinkExpiry(ttlDays, state.createdAt), version: state.version };
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
