import type { BrowserContext, Page } from '@playwright/test';
import { expect, test } from '../../fixtures';

// One customer's visit, in order: the cart built by the first test is the one the next ones check out.
test.describe('checkout', () => {
  test.describe.configure({ mode: 'serial' });

  let context: BrowserContext;
  let page: Page;

  test.beforeAll(async ({ browser }, testInfo) => {
    // The project's base URL and signed-in session, in a page the three tests share.
    const { baseURL, storageState } = testInfo.project.use;
    context = await browser.newContext({ baseURL, storageState });
    page = await context.newPage();
  });

  test.afterAll(async () => {
    await context.close();
  });

  test('fill the cart', async () => {
    await page.goto('/catalog');
    await page.getByRole('button', { name: 'Add Hiking Boot to cart' }).click();
    await expect(page.getByRole('status')).toHaveText('Hiking Boot added to cart');
    await page.getByRole('button', { name: 'Add City Sneaker to cart' }).click();
    await expect(page.getByTestId('cart-count')).toHaveText('2');
  });

  test('the cart shows the total', async () => {
    await page.getByRole('link', { name: /Cart/ }).click();
    await expect(page.getByRole('listitem')).toHaveCount(2);
    await expect(page.getByTestId('cart-total')).toHaveText('€194');
  });

  test('place the order', { tag: '@smoke' }, async () => {
    await test.step('go to checkout, signed in', async () => {
      await page.getByRole('link', { name: 'Checkout' }).click();
      await expect(page.getByRole('heading', { level: 1 })).toHaveText('Checkout');
      await expect(page.getByTestId('checkout-count')).toHaveText('2');
    });
    await test.step('place the order', async () => {
      await page.getByRole('button', { name: 'Place order' }).click();
      await expect(page.getByRole('status')).toHaveText('Order placed: 2 items, total €194');
    });
    await expect(page.getByTestId('cart-count')).toHaveText('0');
  });
});
