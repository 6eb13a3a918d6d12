// Preloaded into the bench's worker (NODE_OPTIONS=--require): counts the statements its Postgres
// client (pg, under Prisma's adapter) sends, and writes the count to the file named by
// TESTRUN_BENCH_STATEMENTS when sent SIGUSR2 (a file rewritten on a timer cost the worker a
// measurable share of its CPU in a trial). Only the worker process counts (its sandboxes run with
// an environment of their own).
'use strict';
const fs = require('node:fs');
const Module = require('node:module');

const file = process.env.TESTRUN_BENCH_STATEMENTS;
if (file && /worker[/\\]dist[/\\]main\.js$/.test(process.argv[1] ?? '')) {
  let count = 0;
  // Written to a temporary name, then renamed: the reader never sees a half-written count.
  process.on('SIGUSR2', () => {
    fs.writeFileSync(`${file}.part`, String(count));
    fs.renameSync(`${file}.part`, file);
  });
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
