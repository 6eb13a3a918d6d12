import { expect, test } from '../fixtures';

test.describe('account', () => {
  // These tests sign in themselves, so they start without the setup project's session.
  test.use({ storageState: { cookies: [], origins: [] } });

  test('signing in with the account password', { tag: '@smoke' }, async ({ loginPage, account }) => {
    await loginPage.goto('/account');
    await loginPage.signIn(account.email, account.password);
    await loginPage.expectSignedIn(account.email);
  });

  test('a wrong password is refused', async ({ loginPage, account }) => {
    await loginPage.goto('/account');
    await loginPage.signIn(account.email, 'not-the-password');
    await expect(loginPage.error).toHaveText('Wrong email or password');
  });
});
