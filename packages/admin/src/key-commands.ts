import { InvalidArgumentError, type Command } from 'commander';
import { API_KEY_SCOPES, parseApiKeyScopes, type ApiKeyScope, type Plan } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { withAnnouncer } from './announce';
import { changeApiKey, createApiKey, keyScopes, setApiKeyScopes, type KeyAction } from './operations';
import { runAction, type AdminContext } from './run-action';

/** `--json` of `key create`: the only time the key is shown. */
export type KeyCreatedOutput = {
  id: string;
  key: string;
  prefix: string;
  workspaceId: string;
  name: string;
  scopes: ApiKeyScope[];
};
/** `--json` of `key pause|resume|revoke`. */
export type KeyStateOutput = {
  id: string;
  paused: boolean;
  revoked: boolean;
  workspaceId: string;
  plan: Plan;
  /** Whether the API refuses the key now. */
  refused: boolean;
  note?: string;
};
/** `--json` of `key set-scopes`. */
export type KeyScopesOutput = { id: string; workspaceId: string; scopes: ApiKeyScope[] };
/** One key of `key list --json`: never the key, only its prefix. */
type KeyListing = {
  id: string;
  name: string;
  prefix: string;
  scopes: ApiKeyScope[];
  state: 'active' | 'paused' | 'revoked';
  creator: string;
  createdAt: string;
  lastUsedAt: string | null;
};
/** `--json` of `key list`. */
export type KeyListOutput = { keys: KeyListing[] };

const SCOPES_HELP = `comma-separated, of ${API_KEY_SCOPES.join(', ')}; each brings the narrower ones (deploy ⊃ preview ⊃ run)`;

/** commander's parser of `--scopes`: an unknown name is a usage error that lists the known ones. */
function scopesOption(value: string): ApiKeyScope[] {
  const parsed = parseApiKeyScopes(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  return parsed.scopes;
}

async function listKeys(db: Db, workspaceId: string): Promise<KeyListing[]> {
  const rows = await db.apiKey.findMany({
    where: { workspaceId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: { creator: { select: { email: true } } },
  });
  return rows.map((k) => ({
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: keyScopes(k.scopes),
    state: k.revokedAt ? 'revoked' : k.paused ? 'paused' : 'active',
    creator: k.creator.email,
    createdAt: k.createdAt.toISOString(),
    lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  }));
}

/** `admin key create|list|set-scopes|pause|resume|revoke`. */
export function registerKeyCommands(admin: Command, ctx: AdminContext): void {
  const key = admin.command('key').description('Create, list, scope, pause, resume and revoke API keys');
  key
    .command('create')
    .description('Create an API key; the key is printed this once and never again')
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .requiredOption('--creator <email>', 'a member of the workspace; the key stops working if they leave')
    .requiredOption('--name <name>', 'a name to tell keys apart')
    .option('--scopes <scopes>', `what the key may do (default run): ${SCOPES_HELP}`, scopesOption)
    .option('--json', 'print JSON only')
    .action((o: { workspace: string; creator: string; name: string; scopes?: ApiKeyScope[]; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const input = { workspaceId: o.workspace, creatorEmail: o.creator, name: o.name, scopes: o.scopes };
        const data: KeyCreatedOutput = await createApiKey(db, input);
        return {
          data,
          text: `Created key ${data.id} "${data.name}" (scopes ${data.scopes.join(', ')}). Store it now; it will not be shown again:\n${data.key}`,
        };
      }),
    );
  key
    .command('list')
    .description("List a workspace's keys: id, name, prefix, scopes, state, creator (never the key)")
    .requiredOption('--workspace <workspaceId>', 'workspace id')
    .option('--json', 'print JSON only')
    .action((o: { workspace: string; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const keys = await listKeys(db, o.workspace);
        const data: KeyListOutput = { keys };
        const lines = keys.map(
          (k) =>
            `${k.id}\t${k.name}\t${k.prefix}…\tscopes ${k.scopes.join(',')}\t${k.state}\t${k.creator}\tcreated ${k.createdAt}`,
        );
        return { data, text: lines.length > 0 ? lines.join('\n') : `No keys in workspace ${o.workspace}.` };
      }),
    );
  key
    .command('set-scopes')
    .description('Give a key exactly these scopes; the API applies the change on the next request')
    .argument('<keyId>')
    .requiredOption('--scopes <scopes>', SCOPES_HELP, scopesOption)
    .option('--json', 'print JSON only')
    .action((keyId: string, o: { scopes: ApiKeyScope[]; json?: boolean }) =>
      runAction(ctx, !!o.json, async (db) => {
        const data: KeyScopesOutput = await withAnnouncer(ctx.env, (announce) =>
          setApiKeyScopes(db, keyId, o.scopes, announce),
        );
        return { data, text: `Key ${data.id} has the scopes ${data.scopes.join(', ')}.` };
      }),
    );
  registerKeyStateCommands(key, ctx);
}

/** `admin key pause|resume|revoke`. */
function registerKeyStateCommands(key: Command, ctx: AdminContext): void {
  for (const action of ['pause', 'resume', 'revoke'] as const satisfies readonly KeyAction[]) {
    key
      .command(action)
      .description(
        action === 'pause'
          ? 'Pause a key (refused while its workspace is on the Free plan)'
          : action === 'resume'
            ? 'Resume a paused key'
            : 'Revoke a key for good',
      )
      .argument('<keyId>')
      .option('--json', 'print JSON only')
      .action((keyId: string, o: { json?: boolean }) =>
        runAction(ctx, !!o.json, async (db) => {
          const k = await withAnnouncer(ctx.env, (announce) => changeApiKey(db, keyId, action, announce));
          const row = await db.apiKey.findUniqueOrThrow({
            where: { id: keyId },
            select: { workspace: { select: { id: true, plan: true } } },
          });
          const plan = row.workspace.plan;
          // The contract refuses a paused key only on the Free plan: say so when it has no effect yet.
          const note =
            k.paused && !k.revoked && plan !== 'free'
              ? `Workspace ${row.workspace.id} is on the ${plan} plan: a paused key keeps working until the workspace returns to the Free plan.`
              : undefined;
          const data: KeyStateOutput = {
            ...k,
            workspaceId: row.workspace.id,
            plan,
            refused: k.revoked || (k.paused && plan === 'free'),
            ...(note ? { note } : {}),
          };
          const state = k.revoked ? 'revoked' : k.paused ? 'paused' : 'active';
          return { data, text: `Key ${k.id} is ${state}.${note ? ` Note: ${note}` : ''}` };
        }),
      );
  }
}
