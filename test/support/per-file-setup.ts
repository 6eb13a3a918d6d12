import { randomBytes } from 'node:crypto';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

/**
 * Runs before each test file: gives the file a database of its own, cloned from the migrated
 * template that globalSetup built, and a Redis prefix of its own. Workers and reconcilers that one
 * file starts then never see another file's runs. It must be synchronous, since test modules read
 * the environment when they load: the clone runs on a worker thread while this one waits on a
 * shared flag (a child process would cost a Node start and a load of `pg` per file).
 */
const CREATE_DATABASE = `
  const { workerData } = require('node:worker_threads');
  const { Client } = require(workerData.pg);
  const done = (error) => {
    workerData.port.postMessage(error ? String((error && error.message) || error) : null);
    Atomics.store(workerData.flag, 0, 1);
    Atomics.notify(workerData.flag, 0);
  };
  (async () => {
    const c = new Client({ connectionString: workerData.admin });
    await c.connect();
    try {
      for (let i = 0; ; i++) {
        try { await c.query('CREATE DATABASE "' + workerData.name + '" TEMPLATE "' + workerData.template + '"'); break; }
        catch (e) { if (i >= 20 || !/being accessed/.test(e.message)) throw e; await new Promise((r) => setTimeout(r, 100 + Math.random() * 200)); }
      }
    } finally {
      await c.end();
    }
  })().then(() => done(null), done);`;

function createDatabase(admin: string, name: string, template: string): void {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(CREATE_DATABASE, {
    eval: true,
    workerData: { admin, name, template, flag, port: port2, pg: require.resolve('pg') },
    transferList: [port2],
  });
  const woke = Atomics.wait(flag, 0, 0, 60_000);
  const failure: unknown = receiveMessageOnPort(port1)?.message;
  void worker.terminate();
  port1.close();
  if (woke === 'timed-out') throw new Error(`could not create the test file's database ${name}: no answer in 60 s`);
  if (typeof failure === 'string') throw new Error(`could not create the test file's database: ${failure}`);
}

const template = process.env.TESTRUN_TEMPLATE_DATABASE_URL;
if (template) {
  const suffix = randomBytes(4).toString('hex');
  const url = new URL(template);
  const templateName = url.pathname.slice(1);
  url.pathname = `/${templateName}_${suffix}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  createDatabase(admin.toString(), `${templateName}_${suffix}`, templateName);
  process.env.DATABASE_URL = url.toString();
  process.env.REDIS_PREFIX = `${process.env.TESTRUN_TEMPLATE_REDIS_PREFIX}-${suffix}`;
}
