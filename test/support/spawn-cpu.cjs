#!/usr/bin/env node
/*
 * The CPU of the processes a whole jest run starts, by kind and by test file: joins the spawn log
 * (test/support/spawn-log.ts) with the kernel's process accounting read by `dump-acct`.
 *   node test/support/spawn-cpu.cjs <spawn log> <dump-acct output>
 * A spawned process counts with its descendants (those it starts itself); processes inside a
 * sandbox's PID namespace are recorded with parents the accounting cannot follow, so they are
 * summed apart ("parent unknown"), as is each jest worker's own CPU.
 */
const fs = require('node:fs');

const [logFile, acctFile] = process.argv.slice(2);
const procs = new Map();
for (const line of fs.readFileSync(acctFile, 'utf8').trim().split('\n')) {
  const f = line.split('|').map((s) => s.trim());
  // dump-acct: command|version|utime|stime|elapsed|uid|gid|mem|io|pid|ppid|…, times in ticks (1/100 s)
  procs.set(f[9], { command: f[0], parent: f[10], cpu: (Number(f[2]) + Number(f[3])) / 100, children: [] });
}
for (const [pid, p] of procs) procs.get(p.parent)?.children.push(pid);
const spawns = fs
  .readFileSync(logFile, 'utf8')
  .trim()
  .split('\n')
  .map((l) => l.split('\t'))
  .filter((s) => s.length >= 5 && /^\d+$/.test(s[0]));
const logged = new Set(spawns.map((s) => s[0]));
const workers = new Set(spawns.map((s) => s[1]));
const treeCpu = (pid) => {
  const p = procs.get(pid);
  return p ? p.children.reduce((sum, c) => sum + (logged.has(c) ? 0 : treeCpu(c)), p.cpu) : 0;
};
const kindOf = (program, args) => {
  const name = program.split('/').pop();
  if (name !== 'node') return /^chromium/.test(name) ? 'chromium' : name === 'sh' ? 'sh (a sandbox or a script)' : name;
  const script = args.split(' ').find((a) => /\.(c|m)?js$/.test(a)) ?? args.split(' ')[0];
  return `node ${script.replace(/^.*\/work\/[^/]+\//, '').replace(/^\/tmp\/\S*/, '/tmp/…')}`;
};
const add = (table, key, cpu) => {
  const row = (table[key] ??= { cpu: 0, count: 0 });
  row.cpu += cpu;
  row.count += 1;
};
const byKind = {};
const byFile = {};
for (const [pid, , file, program, args] of spawns) {
  const cpu = treeCpu(pid);
  add(byKind, kindOf(program, args), cpu);
  add(byFile, file, cpu);
}
/** Where a process's ancestry leads: a jest worker, a parent the accounting lacks, or neither. */
const origin = (pid) => {
  for (let p = procs.get(pid), n = 0; p && n < 64; p = procs.get(p.parent), n++) {
    if (workers.has(p.parent)) return 'started by a jest worker';
    if (!procs.has(p.parent)) return 'parent unknown (in sandboxes)';
  }
  return 'other';
};
const totals = { 'jest workers': 0, postgres: 0 };
for (const [pid, p] of procs) {
  const key = workers.has(pid) ? 'jest workers' : p.command === 'postgres' ? 'postgres' : origin(pid);
  totals[key] = (totals[key] ?? 0) + p.cpu;
}
const show = (title, table) => {
  console.log(`== ${title}`);
  for (const [key, row] of Object.entries(table)
    .sort((a, b) => b[1].cpu - a[1].cpu)
    .slice(0, 25))
    console.log(`${row.cpu.toFixed(1).padStart(8)} s ${String(row.count).padStart(4)}x  ${key}`);
};
console.log('== all processes, CPU seconds');
for (const [key, cpu] of Object.entries(totals)) console.log(`${cpu.toFixed(1).padStart(8)} s  ${key}`);
show('spawned by kind (with descendants)', byKind);
show('spawned by test file (with descendants)', byFile);
