/**
 * The Playwright project `pnpm bench visual` runs on both sides: `e2e/visual.spec.ts` with `n` tests
 * tagged `@shot` (a 1280×720 page of text, boxes and a gradient, then `toHaveScreenshot`), the same `n`
 * without the screenshot tagged `@plain`, and six `@steady` pages compared at `threshold: 0` (a static
 * page, CSS animations, a focused input with its caret, an element, dense text, a full page that
 * scrolls); its `testrun.yaml` has one suite per tag (`shot`, `plain`, `steady`) and `all`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { linkPlaywright } from '../playwright/project';

/** How a `toHaveScreenshot` step's title starts, in Playwright's report and in the service's steps. */
export const SHOT_STEP = 'Expect "toHaveScreenshot';

/** How many `@steady` tests the spec has. */
export const STEADY_TESTS = 6;

function write(root: string, file: string, text: string): void {
  const target = path.join(root, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
}

/**
 * Chromium from `CHROMIUM_PATH` with the worker's flags, 1280×720, evidence off, a JSON report at
 * `BENCH_REPORT_FILE`, and with `BENCH_STEPS_FILE` the durations of its `toHaveScreenshot` steps there
 * (the service replaces the reporters with its own, and keeps every step's duration itself).
 */
function config(chromiumArgs: readonly string[]): string {
  return `import { defineConfig } from '@playwright/test';

const executablePath = process.env.CHROMIUM_PATH;

export default defineConfig({
  testDir: '.',
  fullyParallel: true,
  retries: 0,
  timeout: 30_000,
  reporter: [
    ['json', { outputFile: process.env.BENCH_REPORT_FILE ?? 'report.json' }],
    ...(process.env.BENCH_STEPS_FILE ? [['./step-times.cjs'] as ['./step-times.cjs']] : []),
  ],
  outputDir: process.env.BENCH_OUTPUT_DIR ?? 'test-results',
  use: {
    viewport: { width: 1280, height: 720 },
    trace: 'off',
    video: 'off',
    screenshot: 'off',
    launchOptions: executablePath ? { executablePath, args: ${JSON.stringify(chromiumArgs)} } : {},
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
});
`;
}

/** A reporter that writes the durations of the `toHaveScreenshot` steps to `BENCH_STEPS_FILE`, a JSON array. */
const STEP_TIMES = `const { writeFileSync } = require('node:fs');

module.exports = class StepTimes {
  durations = [];
  onStepEnd(test, result, step) {
    if (step.category === 'expect' && step.title.startsWith(${JSON.stringify(SHOT_STEP)})) this.durations.push(step.duration);
  }
  onEnd() {
    writeFileSync(process.env.BENCH_STEPS_FILE, JSON.stringify(this.durations));
  }
};
`;

/** The spec's pages: a dashboard per test, and the steady pages' extras. */
const PAGES = `const card = (i: number, j: number) =>
  \`<section style="background: rgba(255,255,255,.92); border-radius: 12px; padding: 16px; height: 200px;
    box-shadow: 0 4px 12px rgba(0,0,0,.25)"><h2 style="margin: 0 0 8px">Card \${i}.\${j}</h2>
    <p style="margin: 0 0 12px">Orders shipped this week, by region and carrier, with returns.</p>
    <div style="height: 24px; width: \${20 + ((i * 7 + j * 13) % 80)}%; background: hsl(\${(i * 37 + j * 45) % 360} 70% 45%)"></div>
    <div style="margin-top: 12px; display: flex; gap: 8px">\${'<span style="width: 28px; height: 28px; border: 2px solid #333; border-radius: 50%"></span>'.repeat(4)}</div>
  </section>\`;

const dashboard = (i: number, extra = '') =>
  \`<body style="margin: 0; font: 16px/1.4 sans-serif; height: 720px;
    background: linear-gradient(135deg, hsl(\${(i * 29) % 360} 60% 35%), hsl(\${(i * 29 + 120) % 360} 60% 70%))">
  <header style="height: 72px; background: #fff; display: flex; align-items: center; padding: 0 32px">
    <h1 style="margin: 0; font-size: 28px">Dashboard \${i}</h1></header>
  <main id="cards" style="display: grid; grid-template-columns: repeat(4, 1fr); gap: 24px; padding: 32px">
    \${Array.from({ length: 8 }, (_, j) => card(i, j)).join('')}</main>\${extra}</body>\`;

const ANIMATED = \`<style>
  @keyframes spin { to { transform: rotate(360deg) } }
  @keyframes fade { from { opacity: 0 } to { opacity: 1 } }
  .spin { position: fixed; left: 40px; bottom: 40px; width: 48px; height: 48px; border: 6px solid #fff;
    border-top-color: #c00; border-radius: 50%; animation: spin .8s linear infinite }
  .fade { position: fixed; right: 40px; bottom: 40px; padding: 12px; background: #222; color: #fff; animation: fade 3s }
  .grow { position: fixed; left: 120px; bottom: 52px; height: 16px; width: 10px; background: #ff0; transition: width 2s }
</style><div class="spin"></div><div class="fade">Saved</div><div class="grow"></div>
<script>requestAnimationFrame(() => requestAnimationFrame(() => (document.querySelector('.grow').style.width = '600px')))</script>\`;

const FORM = \`<form style="position: fixed; left: 32px; bottom: 32px; background: #fff; padding: 16px; border-radius: 8px">
  <label>Name <input name="name" style="font-size: 18px; padding: 6px"></label>
  <label>Note <textarea name="note" rows="2" style="font-size: 16px"></textarea></label></form>\`;

const TEXT = Array.from({ length: 24 }, (_, k) =>
  \`<p style="margin: 0; font-size: \${10 + (k % 9) * 2}px; letter-spacing: \${(k % 3) * 0.3}px; font-style: \${k % 2 ? 'italic' : 'normal'}">
    Line \${k}: The quick brown fox jumps over the lazy dog, 0123456789 — ÀÉÎÕÜ ß ﬁ ﬂ.</p>\`).join('');

const exact = { threshold: 0 };
`;

/** The spec: `n` tests with the screenshot and `n` without, then the steady pages. */
function spec(n: number): string {
  return `import { expect, test } from '@playwright/test';

${PAGES}
for (let i = 0; i < ${n}; i++) {
  test(\`p\${i}\`, { tag: '@shot' }, async ({ page }) => {
    await page.setContent(dashboard(i));
    await expect(page).toHaveScreenshot(\`p\${i}.png\`);
  });

  test(\`p\${i} without its screenshot\`, { tag: '@plain' }, async ({ page }) => {
    await page.setContent(dashboard(i));
  });
}

test.describe('steady', { tag: '@steady' }, () => {
  test('a static page', async ({ page }) => {
    await page.setContent(dashboard(1000));
    await expect(page).toHaveScreenshot('steady-static.png', exact);
  });

  test('CSS animations: infinite, finite, a transition', async ({ page }) => {
    await page.setContent(dashboard(1001, ANIMATED));
    await expect(page).toHaveScreenshot('steady-animated.png', exact);
  });

  test('a focused input and its caret', async ({ page }) => {
    await page.setContent(dashboard(1002, FORM));
    await page.getByLabel('Note').fill('first line');
    await page.getByLabel('Name').fill('Ada Lovelace');
    await expect(page).toHaveScreenshot('steady-caret.png', exact);
  });

  test('an element', async ({ page }) => {
    await page.setContent(dashboard(1003));
    await expect(page.locator('#cards section').nth(5)).toHaveScreenshot('steady-card.png', exact);
  });

  test('dense text', async ({ page }) => {
    await page.setContent(\`<body style="margin: 24px; font-family: sans-serif">\${TEXT}</body>\`);
    await expect(page).toHaveScreenshot('steady-text.png', exact);
  });

  test('a full page that scrolls', async ({ page }) => {
    await page.setContent(dashboard(1004, \`<div style="background: #fff; padding: 24px">\${TEXT}\${TEXT}</div>\`));
    await expect(page).toHaveScreenshot('steady-full.png', { ...exact, fullPage: true });
  });
});
`;
}

/** The project in `root`: config, spec, `testrun.yaml` (project `bench-visual`) and a linked `@playwright/test`. */
export function writeVisualProject(
  root: string,
  options: { n: number; baseUrl: string; chromiumArgs: readonly string[] },
): void {
  write(root, 'e2e/playwright.config.ts', config(options.chromiumArgs));
  write(root, 'e2e/visual.spec.ts', spec(options.n));
  write(root, 'e2e/step-times.cjs', STEP_TIMES);
  const suites = ['shot', 'plain', 'steady']
    .map((tag) => `  - slug: ${tag}\n    playwright: { grep: "@${tag}" }\n`)
    .join('');
  write(
    root,
    'testrun.yaml',
    `slug: bench-visual\nname: Visual comparison bench\nbaseUrl: ${options.baseUrl}\nplaywright:\n  config: e2e/playwright.config.ts\nsuites:\n${suites}  - slug: all\n    playwright: {}\n`,
  );
  linkPlaywright(root);
}
