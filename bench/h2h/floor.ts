/**
 * The floor of the head-to-head, run as its own process: one warm Chromium (the worker's binary and
 * flags), K contexts at a time, the same N tests written directly against Playwright's API, no
 * framework, no evidence. Prints one JSON line: wall time and CPU (this process and its Chromium
 * tree) of the timed part, and how many tests passed.
 *
 * Two switches add, one at a time, what the service must do on every run and the bare floor skips,
 * so the gap between the service and the floor can be taken apart: `proxy` sends every request of
 * each context through the worker's egress proxy (the network policy), as the worker does; `trace`
 * records each test's trace as the default `on-failure` policy does (DOM snapshots, no screencast)
 * and throws it away when the test passes.
 */
import { readTargetPolicyConfig, resolveTargetPolicy } from '@testrun/core/target-policy';
import { EgressProxy, egressProxyLaunchArgs } from '@testrun/worker';
import { chromium, type Browser, type BrowserContextOptions } from 'playwright';
import { treeCpuMs } from './cpu';
import { testTargetAllow } from '../../test/support/processes';

interface FloorArgs {
  n: number;
  workers: number;
  baseUrl: string;
  executablePath: string;
  args: string[];
  proxy?: boolean;
  trace?: boolean;
}

interface Extras {
  /** A test's context options, and what to release when the test ends. */
  open: (i: number) => { options: BrowserContextOptions; close: () => void };
  trace: boolean;
}

async function oneTest(browser: Browser, baseUrl: string, i: number, extras: Extras): Promise<boolean> {
  const opened = extras.open(i);
  const context = await browser.newContext(opened.options);
  try {
    if (extras.trace) await context.tracing.start({ snapshots: true, screenshots: false });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/signup?n=${i}`);
    await page.locator('#name').fill(`User ${i}`);
    await page.locator('#submit').click();
    await page.locator('#result', { hasText: `Thanks, User ${i}` }).waitFor({ timeout: 10_000 });
    if (extras.trace) await context.tracing.stop();
    return true;
  } catch {
    return false;
  } finally {
    await context.close();
    opened.close();
  }
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as FloorArgs;
  const proxy = options.proxy ? await startProxy() : undefined;
  const extras: Extras = {
    open: (i) => {
      if (!proxy) return { options: {}, close: () => undefined };
      const egress = proxy.openRun(`floor-${i}-${performance.now()}`);
      return { options: { proxy: egress.proxy }, close: () => egress.close() };
    },
    trace: options.trace === true,
  };
  const args = [...options.args, ...(proxy ? egressProxyLaunchArgs(proxy.url) : [])];
  const browser = await chromium.launch({ executablePath: options.executablePath, args, headless: true });
  // Warm up as the service's worker is warm: one test before the clock starts.
  await oneTest(browser, options.baseUrl, 0, extras);
  const cpuBefore = treeCpuMs([process.pid]);
  const began = performance.now();
  let next = 0;
  let passed = 0;
  const lane = async () => {
    for (let i = next++; i < options.n; i = next++) if (await oneTest(browser, options.baseUrl, i, extras)) passed++;
  };
  await Promise.all(Array.from({ length: options.workers }, lane));
  const wallMs = performance.now() - began;
  const cpuMs = treeCpuMs([process.pid]) - cpuBefore;
  await browser.close();
  await proxy?.close();
  process.stdout.write(`${JSON.stringify({ wallMs, cpuMs, passed })}\n`);
}

/** The worker's egress proxy with the bench service's policy: loopback targets allowed. */
async function startProxy(): Promise<EgressProxy> {
  const nowhere = 'http://127.0.0.2:1';
  const config = readTargetPolicyConfig(
    { TARGET_ALLOW: testTargetAllow() },
    { databaseUrl: 'postgresql://bench@127.0.0.2:1/none', redisUrl: 'redis://127.0.0.2:1', publicBaseUrl: nowhere },
  );
  const proxy = new EgressProxy({ policy: await resolveTargetPolicy(config) });
  await proxy.start();
  return proxy;
}

main().catch((error: unknown) => {
  process.stderr.write(`floor failed: ${String(error)}\n`);
  process.exit(1);
});
