import { AdminError } from './operations';
import type { Db } from '@testrun/core/db';
import { DEFAULT_REDIS_URL } from '@testrun/core/env';
import {
  narrowPolicy,
  parseTargetRules,
  readTargetPolicyConfig,
  targetPolicyOf,
  TargetRuleError,
  type TargetPolicy,
} from '@testrun/core/target-policy';
import { databaseUrl } from './run-action';

const WORKSPACE_DENY_LABEL = '--target-deny';

/**
 * Stores a workspace's own denied targets (comma-separated, as TARGET_DENY); an empty list clears
 * them. A bad item is refused, naming it; nothing is stored then.
 */
export async function setWorkspaceTargetDeny(db: Db, workspaceId: string, text: string): Promise<string[]> {
  let rules;
  try {
    rules = parseTargetRules(text, WORKSPACE_DENY_LABEL);
  } catch (error) {
    if (error instanceof TargetRuleError) throw new AdminError(error.message);
    throw error;
  }
  const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { id: true } });
  if (!ws) throw new AdminError(`workspace ${workspaceId} does not exist`);
  const stored = rules.map((rule) => rule.text);
  await db.workspace.update({
    where: { id: workspaceId },
    data: { targetDeny: stored.length > 0 ? stored.join(',') : null },
  });
  return stored;
}

/**
 * The target network policy of a workspace's runs as this environment configures it: TARGET_ALLOW
 * and TARGET_DENY, the deployment's own endpoints, and the workspace's own denied targets.
 */
async function workspaceTargetPolicy(db: Db, workspaceId: string, env: NodeJS.ProcessEnv): Promise<TargetPolicy> {
  const config = readTargetPolicyConfig(env, {
    databaseUrl: databaseUrl(env),
    redisUrl: env.REDIS_URL || DEFAULT_REDIS_URL,
    publicBaseUrl: env.PUBLIC_BASE_URL || `http://localhost:${env.PORT || '3000'}`,
  });
  const ws = await db.workspace.findUnique({ where: { id: workspaceId }, select: { targetDeny: true } });
  const deny = parseTargetRules(ws?.targetDeny ?? undefined, 'the workspace target deny list');
  return deny.length > 0 ? narrowPolicy(targetPolicyOf(config), { deny }) : targetPolicyOf(config);
}

/**
 * Refuses a webhook URL that the workspace's runs could not target: webhooks obey the same network
 * policy (the worker checks every address it connects to again at each delivery).
 */
export async function checkWebhookUrl(db: Db, workspaceId: string, url: string, env: NodeJS.ProcessEnv): Promise<void> {
  if (!URL.canParse(url)) return; // core's addWebhookEndpoint names what is wrong with it
  const decision = (await workspaceTargetPolicy(db, workspaceId, env)).checkUrl(url);
  if (!decision.allowed)
    throw new AdminError(`the webhook URL is not allowed by the target network policy: ${decision.detail}`);
}

/** Refuses a project file whose webhook URLs the target network policy forbids, naming each. */
export async function checkProjectWebhooks(
  db: Db,
  workspaceId: string,
  file: unknown,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const webhooks = typeof file === 'object' && file !== null && 'webhooks' in file ? file.webhooks : undefined;
  if (!Array.isArray(webhooks)) return;
  const policy = await workspaceTargetPolicy(db, workspaceId, env);
  const errors = webhooks.flatMap((webhook: unknown, w) => {
    const url = typeof webhook === 'object' && webhook !== null && 'url' in webhook ? webhook.url : undefined;
    // Anything that is no URL is left to the project file's own validation.
    if (typeof url !== 'string' || !URL.canParse(url)) return [];
    const decision = policy.checkUrl(url);
    return decision.allowed ? [] : [{ path: `/webhooks/${w}/url`, message: decision.detail }];
  });
  if (errors.length > 0)
    throw new AdminError('a webhook URL of the project is not allowed by the target network policy', errors);
}

/**
 * Refuses a project whose base URL the deployment's target network policy (TARGET_ALLOW and
 * TARGET_DENY of this environment, and the workspace's own denied targets) would refuse at enqueue.
 */
export async function checkProjectBaseUrl(
  db: Db,
  workspaceId: string,
  file: unknown,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const baseUrl = typeof file === 'object' && file !== null && 'baseUrl' in file ? file.baseUrl : undefined;
  // A base URL that is no http(s) URL at all is left to the project file's own validation, which
  // names it together with every other problem of the file.
  if (typeof baseUrl !== 'string' || !URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) return;
  const policy = await workspaceTargetPolicy(db, workspaceId, env);
  const decision = policy.checkUrl(baseUrl);
  if (!decision.allowed) {
    throw new AdminError(`the project's baseUrl is not allowed by the target network policy: ${decision.detail}`, [
      { path: '/baseUrl', message: decision.detail },
    ]);
  }
}
