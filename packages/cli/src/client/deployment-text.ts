// What `testrun deploy` and `testrun deployments` print for people: a deployment's changes and
// warnings, and a page of a project's versions.
import type { Deployment, DeploymentChanges, DeploymentDryRun, DeploymentList } from '@testrun/contracts';
import { table } from './output';

/**
 * A deployment's warnings (what discovery noticed and the service does not apply), one line each:
 * `warning: …`. Printed on stderr by `testrun deploy` and `testrun run --file`, whatever the output.
 */
export function warningLines(deployment: Pick<Deployment, 'warnings'>): string[] {
  return deployment.warnings.map((warning) => `warning: ${warning}`);
}

/**
 * The changes, one test a line (`+` added, `-` removed, `~` changed): a step test as `suite/key`; a
 * Playwright test by its title path, under its spec file (and Playwright project), as Playwright's
 * list reporter names it.
 */
function changeLines(changes: DeploymentChanges): string[] {
  const marked = [
    ...changes.added.map((t) => ['+', t] as const),
    ...changes.removed.map((t) => ['-', t] as const),
    ...changes.changed.map((t) => ['~', t] as const),
  ];
  if (marked.length === 0) return ['  (no test changed)'];
  const steps: string[] = [];
  const files = new Map<string, string[]>();
  for (const [mark, t] of marked) {
    if (!t.location) {
      steps.push(`  ${mark} ${t.suiteSlug}/${t.key}`);
      continue;
    }
    const { file, project, titlePath } = t.location;
    const heading = project ? `  [${project}] ${file}` : `  ${file}`;
    const lines = files.get(heading) ?? [];
    lines.push(`    ${mark} ${titlePath?.join(' › ') ?? t.name ?? t.key}`);
    files.set(heading, lines);
  }
  return [...steps, ...[...files].flatMap(([heading, lines]) => [heading, ...lines])];
}

function countChanges(changes: DeploymentChanges): string {
  return `${changes.added.length} added, ${changes.removed.length} removed, ${changes.changed.length} changed`;
}

/** What a deployment did, for people: the version (or the dry run), then its changes. */
export function deploymentText(d: Deployment | DeploymentDryRun): string {
  if ('dry_run' in d)
    return [
      `Dry run of ${d.project_slug}: ${countChanges(d.changes)}; nothing stored.`,
      ...changeLines(d.changes),
    ].join('\n');
  const state = d.active ? 'active' : 'a preview, not active';
  return [
    `Deployed ${d.project_slug} version ${d.version} (${d.id}, ${state}): ${countChanges(d.changes)}.`,
    ...changeLines(d.changes),
  ].join('\n');
}

const instant = (iso: string | null) => (iso ? `${iso.slice(0, 19).replace('T', ' ')}Z` : '-');

/** The versions, one a row (WARNINGS counts them), then each version's warnings under its number. */
export function deploymentsTable({ deployments }: DeploymentList): string {
  if (deployments.length === 0) return 'No deployments.';
  const rows = deployments.map((d) => [
    String(d.version),
    d.active ? 'yes' : 'no',
    d.id,
    instant(d.created_at),
    d.created_by?.key_name ?? '(operator)',
    countChanges(d.changes),
    String(d.warnings.length),
  ]);
  const warned = deployments
    .filter((d) => d.warnings.length > 0)
    .map((d) => [`Version ${d.version}:`, ...warningLines(d).map((line) => `  ${line}`)].join('\n'));
  return [table(['VERSION', 'ACTIVE', 'DEPLOYMENT ID', 'CREATED', 'BY', 'CHANGES', 'WARNINGS'], rows), ...warned].join(
    '\n\n',
  );
}
