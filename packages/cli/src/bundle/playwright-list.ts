import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// What the team's own Playwright loads for a config, asked of it: `playwright test --list` with a
// reporter of ours, run by the @playwright/test installed beside the config (the team's code on the
// team's machine, as `playwright test` runs it). The reporter writes the resolved config (each
// project's testDir, testMatch, testIgnore, dependencies and teardown; globalSetup and
// globalTeardown) and the files of the listed tests; Playwright's own errors (a config that does not
// load, a test file that throws) come back as they are.

/** A testMatch or testIgnore entry: a glob, or a regular expression. */
export type FilePattern = { glob: string } | { regex: string; flags: string };

/** A project of the config as Playwright resolved it. */
interface ListedProject {
  name: string;
  testDir: string;
  testMatch: FilePattern[];
  testIgnore: FilePattern[];
  dependencies: string[];
  teardown: string | null;
}

/** What `playwright test --list` loads: absolute paths. */
export interface ListedConfig {
  globalSetup: string[];
  globalTeardown: string[];
  projects: ListedProject[];
  /** The files of the listed tests. */
  files: string[];
  /** Playwright's errors: the first line of each, and where (an absolute file and a line) when it says. */
  errors: Array<{ file: string | null; line: number | null; message: string }>;
}

const REPORTER = `'use strict';
const fs = require('fs');
const pattern = (p) => (p instanceof RegExp ? { regex: p.source, flags: p.flags } : { glob: String(p) });
const list = (v) => (v == null ? [] : Array.isArray(v) ? v : [v]);
module.exports = class TestrunListReporter {
  constructor() { this.errors = []; this.result = null; }
  printsToStdio() { return false; }
  onBegin(config, suite) {
    this.result = {
      globalSetup: list(config.globalSetup).map(String),
      globalTeardown: list(config.globalTeardown).map(String),
      projects: config.projects.map((p) => ({
        name: p.name, testDir: p.testDir,
        testMatch: list(p.testMatch).map(pattern), testIgnore: list(p.testIgnore).map(pattern),
        dependencies: list(p.dependencies).map(String), teardown: p.teardown == null ? null : String(p.teardown),
      })),
      files: [...new Set(suite.allTests().map((t) => t.location.file))].sort(),
    };
  }
  onError(error) {
    const message = String(error.message || error.value || 'unknown error').split('\\n')[0];
    this.errors.push({ file: (error.location && error.location.file) || null, line: error.location ? error.location.line : null, message });
  }
  onEnd() { this.write(); }
  onExit() { this.write(); }
  write() {
    fs.writeFileSync(process.env.TESTRUN_LIST_OUT, JSON.stringify({ ...(this.result || { missing: true }), errors: this.errors }));
  }
};
`;

/** The `cli.js` of the @playwright/test installed in `packageDir`, or null when it has none. */
export function playwrightCli(packageDir: string): string | null {
  const cli = path.join(packageDir, 'cli.js');
  return existsSync(cli) ? cli : null;
}

/**
 * Runs `playwright test --list` on `config` (absolute) with the team's `cli`, from `cwd`; what it
 * loads, or why it could not say (the config does not load: Playwright's own words).
 */
export function listWithPlaywright(cli: string, config: string, cwd: string): ListedConfig | { failure: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-list-'));
  try {
    const reporter = path.join(dir, 'testrun-list-reporter.cjs');
    const out = path.join(dir, 'listed.json');
    writeFileSync(reporter, REPORTER);
    // Playwright refuses to run inside a Jest worker; the listing never is one, whoever calls the
    // packer. The team's config has no use for the service's API key: it does not see it.
    const { JEST_WORKER_ID: _jest, TESTRUN_API_KEY: _key, ...env } = process.env;
    const child = spawnSync(
      process.execPath,
      [cli, 'test', '--list', `--reporter=${reporter}`, '--config', config, '--pass-with-no-tests'],
      {
        cwd,
        env: { ...env, TESTRUN_LIST_OUT: out, FORCE_COLOR: '0', NO_COLOR: '1' },
        encoding: 'utf8',
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const listed = existsSync(out)
      ? (JSON.parse(readFileSync(out, 'utf8')) as ListedConfig & { missing?: true })
      : null;
    if (listed && !listed.missing) return listed;
    const said = `${child.stderr}\n${child.stdout}`
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('at ') && !line.startsWith('Listing tests'));
    const why = listed?.errors[0]?.message ?? said[0] ?? child.error?.message ?? `exit code ${child.status}`;
    return { failure: why };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
