// The webhook endpoints a project file manages (docs/WEBHOOKS.md): a deployment's activation makes
// them those of its file. The admin commands manage the others (packages/admin).
import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENTS, type ProjectWebhook } from '@testrun/contracts';
import type { DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { sealWebhookSecret } from '../webhooks';
import { DeploymentError } from './errors';

/** The longest endpoint URL accepted. */
const MAX_URL_LENGTH = 2048;

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Refuses what is not an absolute http(s) URL without credentials or fragment; returns it normalised. */
export function checkEndpointUrl(url: string): string {
  if (url.length > MAX_URL_LENGTH) throw refused(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  if (!URL.canParse(url)) throw refused(`${url} is not an absolute URL`);
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw refused(`a webhook URL must be http or https, not ${parsed.protocol.replace(':', '')}`);
  if (parsed.username || parsed.password)
    throw refused('a webhook URL must not carry credentials (deliveries are signed instead)');
  if (parsed.hash) throw refused('a webhook URL must not have a fragment');
  return parsed.toString();
}

/** A webhook URL or endpoint refused: an invalid project file. */
function refused(message: string): DeploymentError {
  return new DeploymentError('invalid', message, [{ path: '/webhooks', message }]);
}

/** An endpoint a project file manages, as `project apply` reports it: the secret only when it was just created. */
export type AppliedWebhook = { id: string; url: string; events: string[]; secret?: string };

/**
 * Makes a project's managed endpoints those of its file (matched by URL): new ones are created with
 * a new secret (returned this once), the events of kept ones are updated, and the ones no longer in
 * the file are removed with their log. Endpoints added with the admin CLI are not touched. `key` is
 * needed only when an endpoint is created.
 */
export async function syncProjectWebhooks(
  tx: DbTx,
  key: Buffer | undefined,
  owner: { workspaceId: string; projectId: string },
  webhooks: readonly ProjectWebhook[],
): Promise<AppliedWebhook[]> {
  const existing = await tx.webhookEndpoint.findMany({
    where: { projectId: owner.projectId },
    select: { id: true, url: true },
  });
  const out: AppliedWebhook[] = [];
  for (const webhook of webhooks) {
    const url = checkEndpointUrl(webhook.url);
    const events = [...(webhook.events ?? WEBHOOK_EVENTS)];
    const found = existing.find((e) => e.url === url);
    if (found) {
      await tx.webhookEndpoint.update({ where: { id: found.id }, data: { events } });
      out.push({ id: found.id, url, events });
      continue;
    }
    if (!key)
      throw new DeploymentError('invalid', 'creating a webhook endpoint needs TESTRUN_SECRET, to seal its secret');
    const id = newId(ID_PREFIX.webhookEndpoint);
    const secret = newWebhookSecret();
    const secretSealed = sealWebhookSecret(key, id, secret);
    await tx.webhookEndpoint.create({ data: { id, ...owner, url, events, secretSealed } });
    out.push({ id, url, events, secret });
  }
  const kept = out.map((e) => e.id);
  await tx.webhookEndpoint.deleteMany({ where: { projectId: owner.projectId, id: { notIn: kept } } });
  return out;
}
