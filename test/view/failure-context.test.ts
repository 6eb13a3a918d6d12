import AxeBuilder from '@axe-core/playwright';
import { STEPS } from './seed';
import { startViewSuite, type ViewEnv, type ViewSuite, type Viewer } from './support';

// What a failure's run page shows besides the message: expected against received, the page's URL
// and title at the failure, and the console errors and failed requests of the run's pages, from a
// fixture page that logs an error, asks for a missing file, calls a closed port and throws.
let world: ViewSuite;
let env: ViewEnv;
let viewer: Viewer;
let runPage: (position: number) => string;

const LONG_EXPECTED = 'Your cart is empty, and the order total is 10 EUR.';

beforeAll(async () => {
  world = await startViewSuite([
    {
      name: 'Cart total shows',
      steps: [
        { action: 'goto', url: '/noisy' },
        { action: 'expectText', selector: '#cart', text: LONG_EXPECTED, timeoutMs: 1_000 },
      ],
    },
    {
      name: 'Title is right',
      steps: [STEPS.home(), { action: 'expectTitle', title: 'Shop of Shoes', timeoutMs: 1_000 }],
    },
  ]);
  ({ env, viewer, runUrl: runPage } = world);
}, 120_000);

afterAll(() => world.close());

test('a failed text expectation shows expected and received, the difference marked, and the page at the failure', async () => {
  const { page } = viewer;
  await page.goto(runPage(0));
  const compare = page.getByRole('definition').filter({ has: page.locator('.compare-expected') });
  expect(await compare.textContent()).toContain(LONG_EXPECTED);
  const received = page.locator('.compare-received');
  expect(await received.textContent()).toContain('Your cart is empty, and the order total is 0 EUR.');
  // Only what differs is marked: "10" against "0" share their "0".
  expect(await page.locator('mark.diff-expected').textContent()).toBe('1');
  expect(await page.locator('mark.diff-received').count()).toBe(0);
  const at = page.locator('.callout .page-at');
  expect(await at.textContent()).toContain(`${env.site.url}/noisy`);
  expect(await at.textContent()).toContain('Noisy shop');
});

test('the console errors, the exception and the failed requests of the page are listed', async () => {
  const { page } = viewer;
  await page.goto(runPage(0));
  const rows = await page.locator('table.events tbody tr').allTextContents();
  const text = rows.map((row) => row.replace(/\s+/g, ' ').trim()).join('\n');
  expect(text).toContain('cart service failed to load');
  expect(text).toContain('checkout widget crashed');
  expect(text).toMatch(/GET \S+\/api\/cart-missing → 404/);
  expect(text).toMatch(/GET http:\/\/127\.0\.0\.1:9\/unreachable → net::ERR_/);
  expect(await page.locator('.page-events h2').textContent()).toMatch(/\(2 console errors, 2 failed requests\)/);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test('a failed title expectation shows both titles', async () => {
  const { page } = viewer;
  await page.goto(runPage(1));
  expect(await page.locator('.compare dt').allTextContents()).toEqual(['Expected title', 'Received title']);
  expect(await page.locator('.compare-expected').textContent()).toContain('Shop of Shoes');
  expect(await page.locator('.compare-received').textContent()).toContain('Testrun Shop');
  // The home page reports nothing: no events section.
  expect(await page.locator('.page-events').count()).toBe(0);
});
