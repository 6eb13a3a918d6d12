import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './processes';

const run = promisify(execFile);

/** The two packages a CI user installs, as `pnpm pack` makes them from the built dist/. */
export const PUBLISHED_PACKAGES = ['client', 'cli'] as const;

/** A tarball made by `pnpm pack` in packages/`name` (built already: `pnpm build` or jest's globalSetup). */
export async function packPackage(name: (typeof PUBLISHED_PACKAGES)[number], into: string): Promise<string> {
  mkdirSync(into, { recursive: true });
  const before = new Set(readdirSync(into));
  await run('pnpm', ['pack', '--pack-destination', into], { cwd: path.join(REPO_ROOT, 'packages', name) });
  const made = readdirSync(into).filter((f) => f.endsWith('.tgz') && !before.has(f));
  if (made.length !== 1) throw new Error(`pnpm pack in packages/${name} made ${made.length} tarballs`);
  return path.join(into, made[0] ?? '');
}

/**
 * Installs `tarball` alone with npm into a new empty directory, as a user would
 * (`npm install ./testrun-cli-0.1.0.tgz`): no workspace, no lockfile, nothing but what the package
 * declares. Returns the directory (its node_modules/.bin/testrun is the installed binary).
 */
export async function installAlone(tarball: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-install-'));
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "install-check", "private": true }\n');
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], {
    cwd: dir,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return dir;
}
