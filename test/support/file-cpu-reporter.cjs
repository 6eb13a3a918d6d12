const fs = require('node:fs');

/**
 * A jest reporter for finding the files that wait rather than work (docs/TESTING.md, "Where a whole
 * run's CPU goes"): with `--runInBand`, one file at a time, it appends each file's wall time and the
 * CPU the whole machine spent meanwhile (the root cgroup v1 `cpuacct.usage`, which also counts the
 * sandboxes, browsers and services the file starts) to the file named by TESTRUN_FILE_CPU
 * (default /tmp/testrun-file-cpu.tsv): seconds of wall, seconds of CPU, failed tests, file.
 */
const USAGE = '/sys/fs/cgroup/cpuacct/cpuacct.usage';
const OUT = process.env.TESTRUN_FILE_CPU || '/tmp/testrun-file-cpu.tsv';

const cpuNs = () => Number(fs.readFileSync(USAGE, 'utf8'));

class FileCpuReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.started = new Map();
  }

  onTestFileStart(test) {
    this.started.set(test.path, { at: Date.now(), cpu: cpuNs() });
  }

  onTestFileResult(test, result) {
    const start = this.started.get(test.path);
    if (!start) return;
    const wall = (Date.now() - start.at) / 1000;
    const cpu = (cpuNs() - start.cpu) / 1e9;
    const file = test.path.startsWith(`${this.rootDir}/`) ? test.path.slice(this.rootDir.length + 1) : test.path;
    fs.appendFileSync(OUT, `${wall.toFixed(1)}\t${cpu.toFixed(1)}\t${result.numFailingTests}\t${file}\n`);
  }
}

module.exports = FileCpuReporter;
