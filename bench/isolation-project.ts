/**
 * The neighbour of `pnpm bench isolation` (bench/isolation.ts): a Playwright project of two
 * one-test suites, `attack` and `idle`, each holding its sandbox for {@link ATTACK_HOLD_MS}.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { linkPlaywright } from './playwright/project';

/** How long the neighbour's test holds its slot. */
export const ATTACK_HOLD_MS = 15_000;

const SPEC = `const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { test } = require('@playwright/test');

const HOLD_MS = ${ATTACK_HOLD_MS};
const node = (code) => spawn(process.execPath, ['-e', code], { stdio: 'ignore' }).on('error', () => {});

test('attacks its worker @attack', async () => {
  test.setTimeout(HOLD_MS + 30_000);
  // Every core: three processes that never yield.
  for (let i = 0; i < 3; i += 1) node('for (;;) {}');
  // Memory held, and the scratch quota filled.
  node('const held = Buffer.alloc(600 * 1024 * 1024, 1); setInterval(() => held[0]++, 1000);');
  node("const fs = require('fs'); const chunk = Buffer.alloc(1 << 20, 7); try { for (;;) fs.appendFileSync('/work/tmp/fill', chunk); } catch {} setInterval(() => {}, 1000);");
  // The worker's reads raced: a folder of its output swapped for a symlink to /etc under 300 attachments.
  fs.mkdirSync('/work/output/rb', { recursive: true });
  fs.writeFileSync('/work/output/rb/shadow', 'mine');
  fs.symlinkSync('/etc', '/work/output/rb.link');
  node("const fs = require('fs'); for (;;) { fs.renameSync('/work/output/rb', '/work/output/rb.real'); fs.renameSync('/work/output/rb.link', '/work/output/rb'); fs.renameSync('/work/output/rb', '/work/output/rb.link'); fs.renameSync('/work/output/rb.real', '/work/output/rb'); }");
  for (let i = 0; i < 300; i += 1)
    test.info().attachments.push({ name: 'screenshot', contentType: 'image/png', path: '/work/output/rb/shadow' });
  // Processes until the process limit refuses them.
  for (let i = 0; i < 400; i += 1) spawn('/usr/bin/sleep', ['120'], { stdio: 'ignore' }).on('error', () => {});
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
});

test('holds a slot idle @idle', async () => {
  test.setTimeout(HOLD_MS + 30_000);
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
});
`;

const CONFIG = `const { defineConfig } = require('@playwright/test');

module.exports = defineConfig({ testDir: '.', retries: 0, use: { trace: 'off', video: 'off', screenshot: 'off' } });
`;

/** The neighbour's project in `root`: `testrun.yaml` (project `bench-attacker`, suites `attack` and `idle`). */
export function writeAttackerProject(root: string, baseUrl: string): void {
  mkdirSync(path.join(root, 'e2e'), { recursive: true });
  writeFileSync(path.join(root, 'e2e', 'playwright.config.js'), CONFIG);
  writeFileSync(path.join(root, 'e2e', 'neighbour.spec.js'), SPEC);
  writeFileSync(
    path.join(root, 'testrun.yaml'),
    [
      'slug: bench-attacker',
      'name: Isolation bench neighbour',
      `baseUrl: ${baseUrl}`,
      'playwright:',
      '  config: e2e/playwright.config.js',
      'suites:',
      '  - slug: attack',
      '    playwright: { grep: "@attack" }',
      '  - slug: idle',
      '    playwright: { grep: "@idle" }',
      '',
    ].join('\n'),
  );
  linkPlaywright(root);
}
