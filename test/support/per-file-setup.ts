import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

/**
 * Runs before each test file: gives the file a database of its own, cloned from the migrated
 * template that globalSetup built, and a Redis prefix of its own. Workers and reconcilers that one
 * file starts then never see another file's runs. It must be synchronous, since test modules read
 * the environment when they load.
 */
const template = process.env.TESTRUN_TEMPLATE_DATABASE_URL;
if (template) {
  const suffix = randomBytes(4).toString('hex');
  const url = new URL(template);
  const templateName = url.pathname.slice(1);
  url.pathname = `/${templateName}_${suffix}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  const script = `
    const { Client } = require('pg');
    (async () => {
      const c = new Client({ connectionString: process.argv[1] });
      await c.connect();
      for (let i = 0; ; i++) {
        try { await c.query('CREATE DATABASE "' + process.argv[2] + '" TEMPLATE "' + process.argv[3] + '"'); break; }
        catch (e) { if (i >= 20 || !/being accessed/.test(e.message)) throw e; await new Promise((r) => setTimeout(r, 100 + Math.random() * 200)); }
      }
      await c.end();
    })().catch((e) => { process.stderr.write(e.message); process.exit(1); });`;
  const result = spawnSync(
    process.execPath,
    ['-e', script, admin.toString(), `${templateName}_${suffix}`, templateName],
    {
      encoding: 'utf8',
      cwd: path.resolve(__dirname, '../..'),
    },
  );
  if (result.status !== 0) throw new Error(`could not create the test file's database: ${result.stderr}`);
  process.env.DATABASE_URL = url.toString();
  process.env.REDIS_PREFIX = `${process.env.TESTRUN_TEMPLATE_REDIS_PREFIX}-${suffix}`;
}
