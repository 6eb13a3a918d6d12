import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHROMIUM_ARGS } from '@testrun/worker';
import { discoverTests, runPlaywrightTests } from './apps/worker/src/executors/playwright';
import { startFixtureSite } from './test/fixtures/site';
import { writeShopSuite } from './bench/playwright/project';
import { serveProxy } from './test/worker/playwright/pw-harness';

async function main() {
  const site = await startFixtureSite();
  const work = mkdtempSync(path.join(tmpdir(), 'testrun-prof-'));
  const suite = path.join(work, 'shop');
  writeShopSuite(suite, { n: 40, baseUrl: 'http://shop.test', chromiumArgs: CHROMIUM_ARGS });
  const proxy = await serveProxy(work, { 'shop.test': Number(new URL(site.url).port) });
  const cli = require.resolve('@playwright/test/cli');
  for (const cache of ['cold', 'warm']) {
    const env = { ...process.env, CHROMIUM_PATH: '/usr/bin/chromium', PWTEST_CACHE_DIR: path.join(work, 'c') };
    const t = Date.now();
    const r = spawnSync(process.execPath, [cli, 'test', '-c', 'e2e/playwright.config.ts', '--workers=1', '-g', '^0: '], { cwd: suite, env: { ...env, }, encoding: 'utf8' });
    console.log(`local 1 test ${cache}: ${Date.now() - t} ms`, r.status);
  }
  const t0 = Date.now();
  const d: any = await discoverTests({ bundleDir: suite, configFile: 'e2e/playwright.config.ts', scratchDir: mkdtempSync(path.join(work, 'd-')) } as any);
  console.log('discovery', Date.now() - t0, d.error ?? d.tests.length);
  const tests = (n: number) => d.tests.slice(0, n);
  for (const n of (process.env.NS ?? "1,1,5").split(",").map(Number)) {
    const scratchDir = mkdtempSync(path.join(work, 's-'));
    const t = Date.now();
    const marks: string[] = [];
    console.log('t0', (Date.now()/1000).toFixed(3));
    const results = await runPlaywrightTests({
      bundleDir: suite, configFile: 'e2e/playwright.config.ts', scratchDir,
      tests: tests(n), network: { proxySocketPath: proxy.socketPath, port: 3128 }, proxy: { server: 'http://127.0.0.1:3128' },
      evidence: 'off', onBegin: () => marks.push(`begin ${Date.now() - t}`),
    } as any, (r) => marks.push(`end ${r.status} ${Date.now() - t}`));
    console.log(`sandbox ${n}: ${Date.now() - t} ms`, marks.join(', '), results.length);
  }
  proxy.server.close(); await site.close(); rmSync(work, { recursive: true, force: true });
}
main().catch((e) => { console.error(e); process.exit(1); });
