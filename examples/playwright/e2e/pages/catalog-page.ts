import { expect, type Locator, type Page } from '@playwright/test';

/** The catalog: the product list, its search box, and the cart counter in the header. */
export class CatalogPage {
  readonly heading: Locator;
  readonly search: Locator;
  readonly cards: Locator;
  readonly emptyMessage: Locator;
  readonly status: Locator;
  readonly cartCount: Locator;

  constructor(readonly page: Page) {
    this.heading = page.getByRole('heading', { level: 1 });
    this.search = page.getByRole('searchbox', { name: 'Search products' });
    this.cards = page.getByTestId('product-card');
    this.emptyMessage = page.getByText('No products match your search.');
    this.status = page.getByRole('status');
    this.cartCount = page.getByTestId('cart-count');
  }

  async goto(): Promise<void> {
    await this.page.goto('/catalog');
    await expect(this.heading).toHaveText('Catalog');
  }

  card(name: string): Locator {
    return this.cards.filter({ has: this.page.getByRole('link', { name, exact: true }) });
  }

  async searchFor(query: string): Promise<void> {
    await this.search.fill(query);
  }

  async addToCart(name: string): Promise<void> {
    await this.card(name)
      .getByRole('button', { name: `Add ${name} to cart` })
      .click();
    await expect(this.status).toHaveText(`${name} added to cart`);
  }

  async open(name: string): Promise<void> {
    await this.card(name).getByRole('link', { name }).click();
    await expect(this.page.getByRole('heading', { level: 1 })).toHaveText(name);
  }
}
