// Webhooks as the worker sees them (docs/WEBHOOKS.md): events are written to the outbox by database
// triggers (migration 20261125110000_webhooks) in the statement that makes a run or suite run
// terminal; the worker delivers them. This module holds what the worker and the admin commands
// (packages/admin/src/operations/webhooks.ts) share: the sealing of an endpoint's secret, the
// messages' place in line, and the body.
import type { RunFinishedEvent, SuiteRunFinishedEvent, WebhookEvent } from '@testrun/contracts';
import type { Db } from './db';
import { queuePriority } from './runs/fair-queue';
import { readRun, readSuiteRun } from './runs/reads';
import { openText, sealText, type DerivedKeys } from './secrets/seal';
import type { ViewLinkConfig } from './view-links';

/** The associated data a secret is sealed with: a sealed secret copied to another endpoint does not open. */
const secretOwner = (endpointId: string) => `webhook-endpoint:${endpointId}`;

/** Seals an endpoint's signing secret (`key` is `deriveKeys(secret).headers`). */
export function sealWebhookSecret(key: Buffer, endpointId: string, secret: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(sealText(key, secretOwner(endpointId), secret));
}

/** Opens an endpoint's signing secret (`key` is `deriveKeys(secret).headers`). */
export function openWebhookSecret(key: Buffer, endpointId: string, sealed: Uint8Array): string {
  return openText(key, secretOwner(endpointId), sealed);
}

/**
 * The same line for webhook messages: each message's place among its workspace's pending messages
 * already handed to the queue (not among `messageIds`) and those of `messageIds` before it (creation
 * order). As a webhook job's priority it has the delivery slots serve workspaces round-robin, so a
 * workspace with a backlog of messages (or of slow endpoints) does not push another's first
 * message behind all of its own (docs/reliability/webhooks.md).
 */
export async function webhookPositions(db: Db, messageIds: readonly string[]): Promise<Map<string, number>> {
  if (messageIds.length === 0) return new Map();
  const ids = [...messageIds];
  const rows = await db.$queryRaw<Array<{ id: string; position: number }>>`
    WITH mine AS (SELECT id, workspace_id, created_at FROM webhook_messages WHERE id = ANY(${ids}::text[])),
    others AS (
      SELECT o.workspace_id, count(*)::int AS n FROM webhook_messages o
      WHERE o.workspace_id IN (SELECT workspace_id FROM mine) AND o.state = 'pending'
        AND o.queued_round = o.round AND o.id <> ALL(${ids}::text[])
      GROUP BY o.workspace_id
    )
    SELECT m.id, (COALESCE(ot.n, 0) + row_number() OVER (PARTITION BY m.workspace_id ORDER BY m.created_at, m.id))::int AS position
    FROM mine m LEFT JOIN others ot ON ot.workspace_id = m.workspace_id`;
  return new Map(rows.map((row) => [row.id, queuePriority(row.position)]));
}

/**
 * The body of an event: the resource exactly as the API's GET answers it, with the event's name
 * first. Null when the resource is gone (its workspace was removed).
 */
export async function buildWebhookBody(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  message: { event: WebhookEvent; workspaceId: string; resourceId: string },
): Promise<string | null> {
  if (message.event === 'run.finished') {
    const read = await readRun(db, message.workspaceId, message.resourceId);
    if (!read) return null;
    const body: RunFinishedEvent = { event: message.event, ...read.run };
    return JSON.stringify(body);
  }
  const suiteRun = await readSuiteRun(db, keys, links, message.workspaceId, message.resourceId);
  if (!suiteRun) return null;
  const body: SuiteRunFinishedEvent = { event: message.event, ...suiteRun };
  return JSON.stringify(body);
}
