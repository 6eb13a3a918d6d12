import { test as setup } from './fixtures';
import { STORAGE_STATE } from './playwright.config';

setup('sign in', async ({ loginPage, account, page }) => {
  await loginPage.goto('/account');
  await loginPage.signIn(account.email, account.password);
  await loginPage.expectSignedIn(account.email);
  await page.context().storageState({ path: STORAGE_STATE });
});
