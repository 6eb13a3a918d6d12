import { InvalidArgumentError, type Command } from 'commander';
import {
  addWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  parseWebhookEvents,
  redeliverWebhookMessage,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEnabled,
  type WebhookDelivery,
  type WebhookEndpointListing,
  type WebhookEndpointWithSecret,
} from './operations';
import { readSecret } from '@testrun/core/env';
import { deriveKeys } from '@testrun/core/secrets';
import { runAction, type AdminContext } from './run-action';
import { checkWebhookUrl } from './target-rules';

/** `--json` of `webhook add` and `webhook rotate-secret`: the only time the secret is shown. */
export type WebhookSecretOutput = WebhookEndpointWithSecret;
/** `--json` of `webhook list`. */
export type WebhookListOutput = { endpoints: WebhookEndpointListing[] };
/** `--json` of `webhook deliveries`. */
export type WebhookDeliveriesOutput = { endpointId: string; deliveries: WebhookDelivery[] };

/** The key endpoint secrets are sealed with, from the deployment's TESTRUN_SECRET. */
const sealingKey = (env: NodeJS.ProcessEnv) => deriveKeys(readSecret(env)).headers;

function parseLimit(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1000)
    throw new InvalidArgumentError('must be a whole number from 1 to 1000');
  return Number(value);
}

function attemptsText(d: WebhookDelivery): string {
  const lines = d.attempts.map(
    (a) =>
      `    #${a.attempt} ${a.at} ${a.status === null ? '-' : `HTTP ${a.status}`} ${a.durationMs} ms${a.error ? ` ${a.error}` : ''}`,
  );
  return [`${d.messageId}\t${d.event}\t${d.resourceId}\t${d.state}\t${d.createdAt}`, ...lines].join('\n');
}

/**
 * `testrun admin webhook add|list|remove|rotate-secret|deliveries|redeliver` (docs/WEBHOOKS.md).
 * A signing secret is printed by `add` and `rotate-secret` only, and stored sealed with the
 * deployment's TESTRUN_SECRET.
 */
export function registerWebhookCommands(admin: Command, ctx: AdminContext): void {
  const webhook = admin.command('webhook').description('Webhook endpoints of a workspace and their delivery log');
  registerEndpointCommands(webhook, ctx);
  registerEndpointStateCommands(webhook, ctx);
  registerDeliveryCommands(webhook, ctx);
}

/** `webhook add|list|remove`. */
function registerEndpointCommands(webhook: Command, ctx: AdminContext): void {
  webhook
    .command('add')
    .description('Add an endpoint; its signing secret is printed this once and never again')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .requiredOption('--url <url>', 'where events are POSTed (http or https; the target network policy applies)')
    .option('--events <events>', 'comma-separated: run.finished, suite_run.finished (default both)')
    .option('--json', 'print JSON only')
    .action((o: { workspace: string; url: string; events?: string; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const events = parseWebhookEvents(o.events);
        await checkWebhookUrl(db, o.workspace, o.url, ctx.env);
        const e = await addWebhookEndpoint(db, sealingKey(ctx.env), { workspaceId: o.workspace, url: o.url, events });
        const data: WebhookSecretOutput = e;
        return {
          data,
          text: `Added webhook endpoint ${e.id} for ${e.events.join(', ')} to ${e.url}. Its signing secret (store it now; it will not be shown again):\n${e.secret}`,
        };
      }),
    );
  webhook
    .command('list')
    .description("List a workspace's endpoints (never their secrets)")
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .option('--json', 'print JSON only')
    .action((o: { workspace: string; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const endpoints = await listWebhookEndpoints(db, o.workspace);
        const data: WebhookListOutput = { endpoints };
        const lines = endpoints.map(
          (e) =>
            `${e.id}\t${e.url}\t${e.events.join(',')}\t${e.enabled ? '' : 'disabled, '}${e.pending} pending, ${e.failed} failed`,
        );
        return {
          data,
          text: lines.length > 0 ? lines.join('\n') : `No webhook endpoints in workspace ${o.workspace}.`,
        };
      }),
    );
  webhook
    .command('remove')
    .description('Remove an endpoint with its delivery log; its pending messages are never sent')
    .argument('<endpointId>')
    .option('--json', 'print JSON only')
    .action((endpointId: string, o: { json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        await removeWebhookEndpoint(db, endpointId);
        return { data: { id: endpointId, removed: true }, text: `Removed webhook endpoint ${endpointId}.` };
      }),
    );
}

/** `webhook disable|enable|rotate-secret`. */
function registerEndpointStateCommands(webhook: Command, ctx: AdminContext): void {
  for (const verb of ['disable', 'enable'] as const) {
    webhook
      .command(verb)
      .description(
        verb === 'disable'
          ? 'Stop giving an endpoint new events (those that happen meanwhile are never sent; pending ones still are)'
          : 'Give a disabled endpoint new events again',
      )
      .argument('<endpointId>')
      .option('--json', 'print JSON only')
      .action((endpointId: string, o: { json?: boolean }) =>
        runAction(ctx, !!o.json, async (db) => {
          await setWebhookEnabled(db, endpointId, verb === 'enable');
          return {
            data: { id: endpointId, enabled: verb === 'enable' },
            text: `Webhook endpoint ${endpointId} is ${verb}d.`,
          };
        }),
      );
  }
  webhook
    .command('rotate-secret')
    .description('Give an endpoint a new signing secret, printed this once; every attempt from now on uses it')
    .argument('<endpointId>')
    .option('--json', 'print JSON only')
    .action((endpointId: string, o: { json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const e = await rotateWebhookSecret(db, sealingKey(ctx.env), endpointId);
        const data: WebhookSecretOutput = e;
        return {
          data,
          text: `New signing secret of webhook endpoint ${e.id} (store it now; it will not be shown again):\n${e.secret}`,
        };
      }),
    );
}

/** `webhook deliveries|redeliver`: the delivery log, and a message sent again. */
function registerDeliveryCommands(webhook: Command, ctx: AdminContext): void {
  webhook
    .command('deliveries')
    .description("An endpoint's last messages, newest first, with every attempt (status, error, duration)")
    .argument('<endpointId>')
    .option('--limit <n>', 'how many messages (default 20)', parseLimit)
    .option('--json', 'print JSON only')
    .action((endpointId: string, o: { limit?: number; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const deliveries = await listWebhookDeliveries(db, endpointId, o.limit);
        const data: WebhookDeliveriesOutput = { endpointId, deliveries };
        return {
          data,
          text: deliveries.length > 0 ? deliveries.map(attemptsText).join('\n') : `No messages for ${endpointId} yet.`,
        };
      }),
    );
  webhook
    .command('redeliver')
    .description('Send a delivered or failed message again: same webhook-id and body, a fresh retry schedule')
    .argument('<messageId>')
    .option('--json', 'print JSON only')
    .action((messageId: string, o: { json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const { round } = await redeliverWebhookMessage(db, messageId);
        return {
          data: { messageId, round },
          text: `Message ${messageId} will be sent again (round ${round}) by the next worker relay pass.`,
        };
      }),
    );
}
