/**
 * Playwright Test projects the Playwright benchmarks write into a directory of their own: the 40
 * tests of the head-to-head as one TypeScript spec against the fixture shop's catalog, and a
 * 100-spec project laid out as a team's (page objects, a fixture, a JSON data file, a setup project,
 * an npm helper package) for the deploy benchmark. Each has its testrun.yaml beside the config's
 * folder, and a node_modules holding `@playwright/test` (a link to the repository's) as a team's has.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SHOP_PRODUCTS } from '../../test/fixtures/shop-pages';

function write(root: string, file: string, text: string): void {
  const target = path.join(root, file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
}

/** `node_modules/@playwright/test` in `root`: a link to the repository's, as `npm install` would leave one. */
export function linkPlaywright(root: string): void {
  const target = path.join(root, 'node_modules', '@playwright', 'test');
  mkdirSync(path.dirname(target), { recursive: true });
  symlinkSync(path.dirname(require.resolve('@playwright/test/package.json')), target, 'dir');
}

/**
 * The config of both projects: Chromium from `CHROMIUM_PATH` with the worker's launch flags when
 * set, no retries, evidence off, a JSON report at `BENCH_REPORT_FILE`. `testrun` (the service)
 * replaces the reporter, workers, retries and launch options with its own.
 */
function config(options: { baseUrl: string; chromiumArgs: readonly string[]; setup: boolean }): string {
  const projects = options.setup
    ? `[
    { name: 'setup', testMatch: /.*\\.setup\\.ts/ },
    { name: 'chromium', use: { browserName: 'chromium' }, dependencies: ['setup'] },
  ]`
    : `[{ name: 'chromium', use: { browserName: 'chromium' } }]`;
  return `import { defineConfig } from '@playwright/test';

const executablePath = process.env.CHROMIUM_PATH;

export default defineConfig({
  testDir: '.',
  fullyParallel: true,
  retries: 0,
  timeout: 30_000,
  reporter: [['json', { outputFile: process.env.BENCH_REPORT_FILE ?? 'report.json' }]],
  outputDir: process.env.BENCH_OUTPUT_DIR ?? 'test-results',
  use: {
    baseURL: ${JSON.stringify(options.baseUrl)},
    trace: 'off',
    video: 'off',
    screenshot: 'off',
    launchOptions: executablePath ? { executablePath, args: ${JSON.stringify(options.chromiumArgs)} } : {},
  },
  projects: ${projects},
});
`;
}

/** Test `i` of the 40: navigate, click, expect, four kinds over the six products of the catalog. */
function shopTest(i: number): string {
  const product = SHOP_PRODUCTS[i % SHOP_PRODUCTS.length] ?? SHOP_PRODUCTS[0];
  const { name, slug, price } = product;
  const q = (s: string) => JSON.stringify(s);
  switch (i % 4) {
    case 0:
      return `test(${q(`${i}: product page of ${name}`)}, async ({ page }) => {
  await page.goto('/catalog');
  await page.getByRole('link', { name: ${q(name)}, exact: true }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(${q(name)});
  await expect(page.getByTestId('price')).toHaveText(${q(`€${price}`)});
});`;
    case 1:
      return `test(${q(`${i}: search finds ${name}`)}, async ({ page }) => {
  await page.goto('/catalog');
  await page.getByRole('searchbox', { name: 'Search products' }).fill(${q(name.split(' ')[0] ?? name)});
  await page.getByRole('button', { name: ${q(`Add ${name} to cart`)} }).click();
  await expect(page.getByRole('status')).toHaveText(${q(`${name} added to cart`)});
});`;
    case 2:
      return `test(${q(`${i}: add ${name} from its page`)}, async ({ page }) => {
  await page.goto(${q(`/product/${slug}`)});
  await page.getByLabel('Size').selectOption('42');
  await page.getByRole('button', { name: 'Add to cart' }).click();
  await expect(page.getByRole('status')).toHaveText(${q(`${name} added to cart`)});
  await expect(page.getByTestId('cart-count')).toHaveText('1');
});`;
    default:
      return `test(${q(`${i}: the cart totals ${name}`)}, async ({ page }) => {
  await page.goto('/catalog');
  await page.getByRole('button', { name: ${q(`Add ${name} to cart`)} }).click();
  await expect(page.getByTestId('cart-count')).toHaveText('1');
  await page.getByRole('link', { name: /Cart/ }).click();
  await expect(page.getByTestId('cart-total')).toHaveText(${q(`€${price}`)});
});`;
  }
}

/**
 * The head-to-head's tests as a Playwright project in `root`: `testrun.yaml` (project `bench-pw`,
 * suite `all`), `e2e/playwright.config.ts`, `e2e/shop.spec.ts` with `n` tests. Returns the config's path.
 */
export function writeShopSuite(root: string, options: { n: number; baseUrl: string; chromiumArgs: readonly string[] }) {
  const tests = Array.from({ length: options.n }, (_, i) => shopTest(i));
  write(root, 'e2e/playwright.config.ts', config({ ...options, setup: false }));
  write(root, 'e2e/shop.spec.ts', `import { expect, test } from '@playwright/test';\n\n${tests.join('\n\n')}\n`);
  write(
    root,
    'testrun.yaml',
    `slug: bench-pw\nname: Playwright bench\nbaseUrl: ${options.baseUrl}\nplaywright:\n  config: e2e/playwright.config.ts\nsuites:\n  - slug: all\n    playwright: {}\n`,
  );
  linkPlaywright(root);
  return path.join(root, 'e2e', 'playwright.config.ts');
}

const AREAS = ['catalog', 'search', 'product', 'cart', 'checkout', 'account', 'orders', 'wishlist', 'promo', 'help'];

const PAGE_OBJECT = `import { expect, type Locator, type Page } from '@playwright/test';
import { formatPrice } from 'shop-test-helpers';

export class CatalogPage {
  readonly cards: Locator;
  constructor(readonly page: Page) {
    this.cards = page.getByTestId('product-card');
  }
  async goto(): Promise<void> {
    await this.page.goto('/catalog');
    await expect(this.page.getByRole('heading', { level: 1 })).toHaveText('Catalog');
  }
  async expectPrice(name: string, price: number): Promise<void> {
    const card = this.cards.filter({ has: this.page.getByRole('link', { name, exact: true }) });
    await expect(card.locator('.price')).toHaveText(formatPrice(price));
  }
}
`;

const FIXTURES = `import { test as base } from '@playwright/test';
import { CatalogPage } from './pages/catalog-page';

export const test = base.extend<{ catalog: CatalogPage }>({
  catalog: async ({ page }, use) => {
    const catalog = new CatalogPage(page);
    await catalog.goto();
    await use(catalog);
  },
});
export { expect } from '@playwright/test';
`;

function areaSpec(area: string, index: number): string {
  const depth = '../../';
  const tag = index % 5 === 0 ? `, { tag: '@smoke' }` : '';
  return `import products from '${depth}data/products.json';
import { expect, test } from '${depth}fixtures';

test.describe('${area} ${index}', () => {
  test('lists the catalog'${tag}, async ({ catalog }) => {
    await expect(catalog.cards).toHaveCount(products.length);
  });

  test('shows the price of ${index % 6}', async ({ catalog }) => {
    const product = products[${index % 6}]!;
    await test.step('check the card', async () => {
      await catalog.expectPrice(product.name, product.price);
    });
  });

  test('opens a product page', async ({ catalog, page }) => {
    const product = products[${(index + 3) % 6}]!;
    await page.getByRole('link', { name: product.name, exact: true }).click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(product.name);
  });
});
`;
}

/**
 * A project of `specs` spec files (3 tests each, 10 areas) in `root`, laid out as a team's: config
 * with a setup project, page object, fixture, JSON data, an npm helper package in node_modules, and
 * `testrun.yaml` (project `bench-pw100`, suites `smoke` by tag and `all`). Returns the config's path.
 */
export function writeLargeProject(
  root: string,
  options: { specs: number; baseUrl: string; chromiumArgs: readonly string[] },
) {
  write(root, 'e2e/playwright.config.ts', config({ ...options, setup: true }));
  write(
    root,
    'e2e/auth.setup.ts',
    `import { test as setup, expect } from '@playwright/test';

setup('sign in', async ({ page }) => {
  await page.goto('/login');
  await page.getByLabel('Email').fill('ada@shop.test');
  await page.getByLabel('Password').fill(process.env.SHOP_PASSWORD ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByTestId('account-email')).toBeVisible();
});
`,
  );
  write(root, 'e2e/pages/catalog-page.ts', PAGE_OBJECT);
  write(root, 'e2e/fixtures.ts', FIXTURES);
  write(root, 'e2e/data/products.json', `${JSON.stringify(SHOP_PRODUCTS, null, 2)}\n`);
  for (let i = 0; i < options.specs; i++) {
    const area = AREAS[i % AREAS.length] ?? 'misc';
    write(root, `e2e/tests/${area}/${area}-${String(i).padStart(3, '0')}.spec.ts`, areaSpec(area, i));
  }
  write(
    root,
    'node_modules/shop-test-helpers/package.json',
    `${JSON.stringify({ name: 'shop-test-helpers', version: '1.0.0', main: 'index.js' }, null, 2)}\n`,
  );
  write(
    root,
    'node_modules/shop-test-helpers/index.js',
    `'use strict';\nexports.formatPrice = (price) => '€' + price;\n`,
  );
  write(
    root,
    'node_modules/shop-test-helpers/index.d.ts',
    'export declare function formatPrice(price: number): string;\n',
  );
  write(
    root,
    'package.json',
    `${JSON.stringify({ name: 'bench-shop-e2e', private: true, devDependencies: { '@playwright/test': '1.65.1', 'shop-test-helpers': '1.0.0' } }, null, 2)}\n`,
  );
  write(
    root,
    'testrun.yaml',
    `slug: bench-pw100\nname: Playwright bench, 100 specs\nbaseUrl: ${options.baseUrl}\nplaywright:\n  config: e2e/playwright.config.ts\nsuites:\n  - slug: smoke\n    playwright: { grep: "@smoke" }\n  - slug: all\n    playwright: {}\n`,
  );
  linkPlaywright(root);
  return path.join(root, 'e2e', 'playwright.config.ts');
}
