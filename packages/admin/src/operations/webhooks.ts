// Webhook endpoints of a workspace as the admin commands manage them (docs/WEBHOOKS.md): endpoints,
// their sealed secrets, the delivery log and redelivery. What the worker needs of them (the secret's
// opening, the body) is in @testrun/core/webhooks.
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEvent, type WebhookMessageState } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { checkEndpointUrl, DeploymentError, newWebhookSecret } from '@testrun/core/projects';
import { sealWebhookSecret } from '@testrun/core/webhooks';
import { AdminError } from './admin-error';

/** The endpoint URL normalised, or the operator told why it is refused. */
function endpointUrl(url: string): string {
  try {
    return checkEndpointUrl(url);
  } catch (e) {
    throw e instanceof DeploymentError ? new AdminError(e.message) : e;
  }
}

/** The events to subscribe to, from a comma-separated list; default all of them. */
export function parseWebhookEvents(text: string | undefined): WebhookEvent[] {
  if (text === undefined) return [...WEBHOOK_EVENTS];
  const events = [
    ...new Set(
      text
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = events.filter((e) => !isWebhookEvent(e));
  if (unknown.length > 0 || events.length === 0)
    throw new AdminError(
      `${unknown.length > 0 ? `unknown event ${unknown.join(', ')}` : 'no event given'}: choose among ${WEBHOOK_EVENTS.join(', ')}`,
    );
  return events.filter(isWebhookEvent);
}

/** An endpoint as the admin commands show it: never its secret. */
export type WebhookEndpointListing = {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  enabled: boolean;
  createdAt: string;
  /** Messages not delivered yet, and messages that ran out of attempts. */
  pending: number;
  failed: number;
};

/** An endpoint just created, or whose secret was just rotated: the only time its secret is shown. */
export type WebhookEndpointWithSecret = {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  secret: string;
};

/**
 * Adds an endpoint to a workspace and returns its new signing secret (shown this once). The caller
 * checks the URL against the target network policy first (see the admin command).
 */
export async function addWebhookEndpoint(
  db: Db,
  key: Buffer,
  input: { workspaceId: string; url: string; events: readonly WebhookEvent[] },
): Promise<WebhookEndpointWithSecret> {
  const url = endpointUrl(input.url);
  const ws = await db.workspace.findUnique({ where: { id: input.workspaceId }, select: { id: true } });
  if (!ws) throw new AdminError(`workspace ${input.workspaceId} does not exist`);
  const id = newId(ID_PREFIX.webhookEndpoint);
  const secret = newWebhookSecret();
  const events = [...input.events];
  await db.webhookEndpoint.create({
    data: {
      id,
      workspaceId: ws.id,
      url,
      events,
      secretSealed: sealWebhookSecret(key, id, secret),
    },
  });
  return { id, workspaceId: ws.id, url, events, secret };
}

/** The endpoints of a workspace, oldest first, with how many of their messages wait or failed. */
export async function listWebhookEndpoints(db: Db, workspaceId: string): Promise<WebhookEndpointListing[]> {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { workspaceId },
    orderBy: { createdAt: 'asc' },
    select: { id: true, workspaceId: true, url: true, events: true, enabled: true, createdAt: true },
  });
  const counts = await db.webhookMessage.groupBy({
    by: ['endpointId', 'state'],
    where: { workspaceId, state: { in: ['pending', 'failed'] } },
    _count: { _all: true },
  });
  const count = (endpointId: string, state: WebhookMessageState) =>
    counts.find((c) => c.endpointId === endpointId && c.state === state)?._count._all ?? 0;
  return endpoints.map((e) => ({
    ...e,
    createdAt: e.createdAt.toISOString(),
    pending: count(e.id, 'pending'),
    failed: count(e.id, 'failed'),
  }));
}

/** Removes an endpoint with its messages and delivery log; what is still pending is never sent. */
export async function removeWebhookEndpoint(db: Db, endpointId: string): Promise<void> {
  const { count } = await db.webhookEndpoint.deleteMany({ where: { id: endpointId } });
  if (count === 0) throw new AdminError(`webhook endpoint ${endpointId} does not exist`);
}

/**
 * Pauses or resumes an endpoint. A disabled endpoint gets no new messages (events that happen while
 * it is disabled are never sent); messages already pending are still sent.
 */
export async function setWebhookEnabled(db: Db, endpointId: string, enabled: boolean): Promise<void> {
  const { count } = await db.webhookEndpoint.updateMany({ where: { id: endpointId }, data: { enabled } });
  if (count === 0) throw new AdminError(`webhook endpoint ${endpointId} does not exist`);
}

/**
 * Replaces an endpoint's signing secret and returns the new one (shown this once). Every attempt
 * from now on, retries of older messages included, is signed with it.
 */
export async function rotateWebhookSecret(db: Db, key: Buffer, endpointId: string): Promise<WebhookEndpointWithSecret> {
  const secret = newWebhookSecret();
  const updated = await db.webhookEndpoint.updateMany({
    where: { id: endpointId },
    data: { secretSealed: sealWebhookSecret(key, endpointId, secret) },
  });
  if (updated.count === 0) throw new AdminError(`webhook endpoint ${endpointId} does not exist`);
  const e = await db.webhookEndpoint.findUniqueOrThrow({
    where: { id: endpointId },
    select: { id: true, workspaceId: true, url: true, events: true },
  });
  return { ...e, secret };
}

/** One message of the delivery log with its attempts, newest message first. */
export type WebhookDelivery = {
  messageId: string;
  event: string;
  resourceId: string;
  state: string;
  createdAt: string;
  deliveredAt: string | null;
  attempts: Array<{ attempt: number; at: string; status: number | null; error: string | null; durationMs: number }>;
};

/** The last `limit` messages of an endpoint with every attempt of each (the delivery log). */
export async function listWebhookDeliveries(db: Db, endpointId: string, limit = 20): Promise<WebhookDelivery[]> {
  const endpoint = await db.webhookEndpoint.findUnique({ where: { id: endpointId }, select: { id: true } });
  if (!endpoint) throw new AdminError(`webhook endpoint ${endpointId} does not exist`);
  const messages = await db.webhookMessage.findMany({
    where: { endpointId },
    orderBy: { createdAt: 'desc' },
    take: limit,
    select: {
      id: true,
      event: true,
      resourceId: true,
      state: true,
      createdAt: true,
      deliveredAt: true,
      log: { orderBy: { attempt: 'asc' } },
    },
  });
  return messages.map((m) => ({
    messageId: m.id,
    event: m.event,
    resourceId: m.resourceId,
    state: m.state,
    createdAt: m.createdAt.toISOString(),
    deliveredAt: m.deliveredAt?.toISOString() ?? null,
    attempts: m.log.map((a) => ({
      attempt: a.attempt,
      at: a.at.toISOString(),
      status: a.responseStatus,
      error: a.error,
      durationMs: a.durationMs,
    })),
  }));
}

/**
 * Sends a message again: its state goes back to `pending` in a new round, with the same id and
 * body, and the worker's relay hands it to the queue with a fresh retry schedule. A message still
 * pending is refused (it is being retried already).
 */
export async function redeliverWebhookMessage(db: Db, messageId: string): Promise<{ round: number }> {
  const rows = await db.$queryRaw<Array<{ round: number }>>`
    UPDATE webhook_messages SET state = 'pending', round = round + 1, delivered_at = NULL
    WHERE id = ${messageId} AND state <> 'pending' RETURNING round`;
  const row = rows[0];
  if (row) return row;
  const exists = await db.webhookMessage.findUnique({ where: { id: messageId }, select: { state: true } });
  if (!exists) throw new AdminError(`webhook message ${messageId} does not exist`);
  throw new AdminError(`webhook message ${messageId} is still pending: it is being retried already`);
}
