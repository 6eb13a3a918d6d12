import { test as base } from '@playwright/test';
import { CatalogPage } from './pages/catalog-page';
import { LoginPage } from './pages/login-page';

export interface Account {
  email: string;
  password: string;
}

interface ShopFixtures {
  /** The shop account the tests sign in with: the password is a secret, never in the repository. */
  account: Account;
  /** The catalog page, already open. */
  catalog: CatalogPage;
  loginPage: LoginPage;
}

export const test = base.extend<ShopFixtures>({
  // eslint-disable-next-line no-empty-pattern
  account: async ({}, use) => {
    const password = process.env.SHOP_PASSWORD;
    if (!password) throw new Error('SHOP_PASSWORD is not set: the shop account password comes from the environment');
    await use({ email: process.env.SHOP_USER ?? 'ada@shop.test', password });
  },
  catalog: async ({ page }, use) => {
    const catalog = new CatalogPage(page);
    await catalog.goto();
    await use(catalog);
  },
  loginPage: async ({ page }, use) => {
    await use(new LoginPage(page));
  },
});

export { expect } from '@playwright/test';
