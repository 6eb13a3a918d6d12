// Preloaded into the bench's worker (NODE_OPTIONS=--require): counts the statements its Postgres
// client (pg, under Prisma's adapter) sends, and keeps the count in the file named by
// TESTRUN_BENCH_STATEMENTS, rewritten at most every 50 ms while it changes. Only the worker process
// counts (its sandboxes run with an environment of their own).
'use strict';
const fs = require('node:fs');
const Module = require('node:module');

const file = process.env.TESTRUN_BENCH_STATEMENTS;
if (file && /worker[/\\]dist[/\\]main\.js$/.test(process.argv[1] ?? '')) {
  let count = 0;
  let written = -1;
  const write = () => {
    if (written === count) return;
    written = count;
    fs.writeFileSync(file, String(count));
  };
  setInterval(write, 50).unref();
  process.on('exit', write);
  const load = Module._load;
  Module._load = function (request, ...rest) {
    const loaded = load.call(this, request, ...rest);
    if (request === 'pg' && loaded?.Client && !loaded.Client.prototype.counted) {
      const query = loaded.Client.prototype.query;
      loaded.Client.prototype.query = function (...args) {
        count += 1;
        return query.apply(this, args);
      };
      loaded.Client.prototype.counted = true;
    }
    return loaded;
  };
}
