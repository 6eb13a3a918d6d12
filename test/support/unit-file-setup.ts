/**
 * Runs before each unit test file (beside the code, under apps/ and packages/): such a test opens no
 * database (the import boundaries forbid it), so it gets no clone of the test database. Its
 * DATABASE_URL names one that does not exist, so that a connection made by mistake fails at once
 * instead of reaching the template every other file is cloned from.
 */
const template = process.env.TESTRUN_TEMPLATE_DATABASE_URL;
if (template) {
  const url = new URL(template);
  url.pathname = `${url.pathname}_unit_none`;
  process.env.DATABASE_URL = url.toString();
}
