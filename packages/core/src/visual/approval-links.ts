import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ViewSubject } from '../secrets/seal';

// Approval links (docs/VISUAL.md, "Approve in the view"): a short-lived capability to approve one
// run's or suite run's visual changes in the browser, handed out by the API to a key that may
// approve them, and only to it. It is not a view link: it is signed with a key of its own
// (DerivedKeys.approval), names the API key it was issued to (whose scopes decide, when a change
// is approved, what it may approve, so revoking the key ends it), carries the subject's link
// version (revoking the subject's view links ends it too) and lasts an hour.

/** How long an approval link works after it was issued. */
export const APPROVAL_LINK_TTL_MS = 60 * 60 * 1000;

/** What an approval link is for and who it was issued to. */
export type ApprovalGrant = { subject: ViewSubject; id: string; keyId: string };

/** The shape of a token: its issue time (epoch seconds, base 36), a tilde, 32 url-safe characters of its HMAC. */
const TOKEN_SHAPE = /^([0-9a-z]{1,11})~([A-Za-z0-9_-]{32})$/;

function mac(key: Buffer, grant: ApprovalGrant, issuedSec: number, version: number): string {
  const input = `approve:${grant.subject}:${grant.id}:${grant.keyId}:${issuedSec}:${version}`;
  return createHmac('sha256', key).update(input).digest('base64url').slice(0, 32);
}

/** An approval link's token, issued at `issuedAt` for the subject's current link `version`. */
export function signApprovalLink(key: Buffer, grant: ApprovalGrant, version: number, issuedAt: Date): string {
  const sec = Math.floor(issuedAt.getTime() / 1000);
  return `${sec.toString(36)}~${mac(key, grant, sec, version)}`;
}

/**
 * When the token's link expires, if it was signed for this grant and link version and has not
 * expired at `now`; else null (a wrong, moved, expired or revoked token alike). Checked in constant time.
 */
export function checkApprovalLink(
  key: Buffer,
  grant: ApprovalGrant,
  token: string,
  version: number,
  now: Date = new Date(),
): Date | null {
  const shape = TOKEN_SHAPE.exec(token);
  if (!shape) return null;
  const sec = Number.parseInt(shape[1] ?? '', 36);
  if (!Number.isSafeInteger(sec)) return null;
  const given = Buffer.from(shape[2] ?? '');
  const expected = Buffer.from(mac(key, grant, sec, version));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const expiresAt = new Date(sec * 1000 + APPROVAL_LINK_TTL_MS);
  // A token issued in the future was not issued by this service: refused like a wrong one.
  return sec * 1000 <= now.getTime() + 60_000 && expiresAt > now ? expiresAt : null;
}

/** The path of an approval page under the view's mount (`/view`). */
export function approvalPath(grant: ApprovalGrant, token: string): string {
  const kind = grant.subject === 'run' ? 'runs' : 'suite-runs';
  return `/approve/${kind}/${encodeURIComponent(grant.id)}/${encodeURIComponent(grant.keyId)}/${token}`;
}

/** The approval link a key holder opens: the page of the subject's changes with their approve buttons. */
export function approvalUrl(
  publicBaseUrl: string,
  key: Buffer,
  grant: ApprovalGrant,
  version: number,
  issuedAt: Date,
): { url: string; expiresAt: Date } {
  const token = signApprovalLink(key, grant, version, issuedAt);
  const issuedSec = Math.floor(issuedAt.getTime() / 1000);
  return {
    url: `${publicBaseUrl}/view${approvalPath(grant, token)}`,
    expiresAt: new Date(issuedSec * 1000 + APPROVAL_LINK_TTL_MS),
  };
}
