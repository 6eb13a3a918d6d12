import { expect, type Locator, type Page } from '@playwright/test';

/** The sign-in form. */
export class LoginPage {
  readonly email: Locator;
  readonly password: Locator;
  readonly submit: Locator;
  readonly error: Locator;

  constructor(readonly page: Page) {
    this.email = page.getByLabel('Email');
    this.password = page.getByLabel('Password');
    this.submit = page.getByRole('button', { name: 'Sign in' });
    this.error = page.getByRole('alert');
  }

  /** Opens a page that needs a session: the shop sends us to the form first. */
  async goto(next = '/account'): Promise<void> {
    await this.page.goto(next);
    await expect(this.page).toHaveURL(/\/login/);
  }

  async signIn(email: string, password: string): Promise<void> {
    await this.email.fill(email);
    await this.password.fill(password);
    await this.submit.click();
  }

  async expectSignedIn(email: string): Promise<void> {
    await expect(this.page.getByTestId('account-email')).toHaveText(email);
  }
}
