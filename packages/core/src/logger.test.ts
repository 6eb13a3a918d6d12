import { errorMessage } from './logger';

describe('errorMessage', () => {
  it('keeps the first line only', () => {
    expect(errorMessage(new Error('page.click: Timeout 5000ms exceeded.\nCall log:\n  - waiting for locator'))).toBe(
      'page.click: Timeout 5000ms exceeded.',
    );
  });

  it('takes the line where Prisma says what went wrong, not its blank first line and invocation header', () => {
    const prisma = new Error(
      '\nInvalid `prisma.$queryRawUnsafe()` invocation:\n\n\nRaw query failed. Code: `57P03`. Message: `the database system is shutting down`',
    );
    expect(errorMessage(prisma)).toBe(
      'Raw query failed. Code: `57P03`. Message: `the database system is shutting down`',
    );
  });

  it('takes the last line after a located Prisma header too', () => {
    const prisma = new Error(
      'Invalid `db.workspace.findUnique()` invocation in\n/app/run-target.js:51:36\n\n  50 |\n→ 51 |   const w = await db.workspace.findUnique(\nDatabase error. Code: `57P01`.',
    );
    expect(errorMessage(prisma)).toBe('Database error. Code: `57P01`.');
  });

  it('says what a non-Error is', () => {
    expect(errorMessage('plain')).toBe('plain');
  });
});
