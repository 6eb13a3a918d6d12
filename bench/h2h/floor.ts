/**
 * The floor of the head-to-head, run as its own process: one warm Chromium (the worker's binary and
 * flags), K contexts at a time, the same N tests written directly against Playwright's API, no
 * framework, no evidence. Prints one JSON line: wall time and CPU (this process and its Chromium
 * tree) of the timed part, and how many tests passed.
 */
import { chromium, type Browser } from 'playwright';
import { treeCpuMs } from './cpu';

interface FloorArgs {
  n: number;
  workers: number;
  baseUrl: string;
  executablePath: string;
  args: string[];
}

async function oneTest(browser: Browser, baseUrl: string, i: number): Promise<boolean> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${baseUrl}/signup?n=${i}`);
    await page.locator('#name').fill(`User ${i}`);
    await page.locator('#submit').click();
    await page.locator('#result', { hasText: `Thanks, User ${i}` }).waitFor({ timeout: 10_000 });
    return true;
  } catch {
    return false;
  } finally {
    await context.close();
  }
}

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as FloorArgs;
  const browser = await chromium.launch({ executablePath: options.executablePath, args: options.args, headless: true });
  // Warm up as the service's worker is warm: one test before the clock starts.
  await oneTest(browser, options.baseUrl, 0);
  const cpuBefore = treeCpuMs([process.pid]);
  const began = performance.now();
  let next = 0;
  let passed = 0;
  const lane = async () => {
    for (let i = next++; i < options.n; i = next++) if (await oneTest(browser, options.baseUrl, i)) passed++;
  };
  await Promise.all(Array.from({ length: options.workers }, lane));
  const wallMs = performance.now() - began;
  const cpuMs = treeCpuMs([process.pid]) - cpuBefore;
  await browser.close();
  process.stdout.write(`${JSON.stringify({ wallMs, cpuMs, passed })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`floor failed: ${String(error)}\n`);
  process.exit(1);
});
