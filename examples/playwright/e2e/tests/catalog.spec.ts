import products from '../data/products.json';
import { expect, test } from '../fixtures';

test.describe('catalog', () => {
  test('lists every product', { tag: '@smoke' }, async ({ catalog }) => {
    await expect(catalog.cards).toHaveCount(products.length);
    for (const product of products) {
      await expect(catalog.card(product.name).locator('.price')).toHaveText(product.price);
    }
  });

  test('search narrows the list', { tag: '@smoke' }, async ({ catalog }) => {
    await catalog.searchFor('boot');
    await expect(catalog.cards.filter({ visible: true })).toHaveCount(2);
    await catalog.searchFor('sandal');
    await expect(catalog.emptyMessage).toBeVisible();
  });

  for (const product of products.filter((p) => p.category === 'Running')) {
    test(`product page of ${product.name}`, async ({ catalog, page }) => {
      await catalog.open(product.name);
      await expect(page.getByTestId('price')).toHaveText(product.price);
      await expect(page.getByTestId('category')).toHaveText(product.category);
    });
  }

  test('adding to the cart counts in the header', async ({ catalog }) => {
    await test.step('add two products', async () => {
      await catalog.addToCart('Rain Boot');
      await catalog.addToCart('Track Spike');
    });
    await test.step('the header counts them', async () => {
      await expect(catalog.cartCount).toHaveText('2');
    });
  });
});
