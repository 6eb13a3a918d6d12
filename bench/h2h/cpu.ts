/**
 * CPU time of process trees, read from /proc. A process's own user and system time plus the time of
 * its children it has waited for (cutime, cstime), summed over every live process of the tree: the
 * difference of two readings is the CPU the tree burnt in between, including processes that started
 * or ended meanwhile (an ended child's time moves into its parent's cutime once reaped).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  ticks: number;
}

function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) may hold spaces and parentheses: fields start after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const num = (index: number) => Number(fields[index - 3]);
  return { pid, ppid: num(4), ticks: num(14) + num(15) + num(16) + num(17) };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) stats.push(stat);
  }
  return stats;
}

/** CPU milliseconds of the trees rooted at `roots` (each process counted once) plus the `extra` processes alone. */
export function treeCpuMs(roots: readonly number[], extra: readonly number[] = []): number {
  const stats = allStats();
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const seen = new Set<number>();
  let ticks = 0;
  const visit = (pid: number) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const stat = byPid.get(pid);
    if (!stat) return;
    ticks += stat.ticks;
    for (const child of children.get(pid) ?? []) visit(child.pid);
  };
  for (const root of roots) visit(root);
  for (const pid of extra) {
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += byPid.get(pid)?.ticks ?? 0;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * A control group that accounts the CPU of every process put in it and of all their descendants,
 * including those that outlive their parents (which /proc readings and `times` miss: a browser a
 * test runner kills without waiting for). Needs root and cgroup v1's cpuacct or cgroup v2.
 */
export class CpuGroup {
  private constructor(
    private readonly dir: string,
    private readonly usageOf: () => number,
  ) {}

  /** A new group, or null where this machine does not let the bench make one. */
  static create(name: string): CpuGroup | null {
    const v1 = `/sys/fs/cgroup/cpuacct/${name}`;
    const v2Roots = ['/sys/fs/cgroup/unified', '/sys/fs/cgroup'];
    try {
      mkdirSync(v1, { recursive: true });
      return new CpuGroup(v1, () => Number(readFileSync(`${v1}/cpuacct.usage`, 'utf8')) / 1e6);
    } catch {
      // Not cgroup v1, or not root: try v2.
    }
    for (const root of v2Roots) {
      const dir = `${root}/${name}`;
      try {
        if (!existsSync(`${root}/cgroup.procs`)) continue;
        mkdirSync(dir, { recursive: true });
        const usage = () => Number(/usage_usec (\d+)/.exec(readFileSync(`${dir}/cpu.stat`, 'utf8'))?.[1] ?? NaN) / 1e3;
        if (Number.isNaN(usage())) continue;
        return new CpuGroup(dir, usage);
      } catch {
        // Try the next root.
      }
    }
    return null;
  }

  /** Moves a process into the group; the children it starts afterwards belong to it too. */
  add(pid: number): void {
    writeFileSync(`${this.dir}/cgroup.procs`, String(pid));
  }

  /** The shell prefix that puts a command into the group before it starts. */
  get enterCommand(): string {
    return `echo $$ > ${this.dir}/cgroup.procs && exec "$@"`;
  }

  /** CPU milliseconds used by the group's processes since it was made. */
  usageMs(): number {
    return this.usageOf();
  }

  /** Kills what is left in the group and removes it. */
  async remove(): Promise<void> {
    for (let tries = 0; tries < 40; tries++) {
      try {
        const left = readFileSync(`${this.dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean);
        for (const pid of left) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // Already gone.
          }
        }
        if (left.length === 0) {
          rmdirSync(this.dir);
          return;
        }
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Runs a command to its end; its output, exit code, wall time and the CPU of its whole process tree:
 * from a control group of its own where the machine allows one, else from bash's `times` (children
 * waited for only: a browser killed without being waited for is missed).
 */
export async function runTimed(
  name: string,
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; output: string; wallMs: number; cpuMs: number }> {
  const group = CpuGroup.create(`testrun-h2h-${name}-${process.pid}`);
  const script = group ? group.enterCommand : '"$@"; code=$?; times; exit $code';
  const began = performance.now();
  const child = spawn('bash', ['-c', script, 'bash', command, ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const wallMs = performance.now() - began;
  if (group) {
    const cpuMs = group.usageMs();
    await group.remove();
    return { code, output, wallMs, cpuMs };
  }
  // `times` prints the shell's own times, then its children's: "0m1.234s 0m0.567s".
  const children = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(output.trimEnd().split('\n').at(-1) ?? '');
  if (!children) throw new Error(`no CPU times from ${command}:\n${output}`);
  const cpuMs =
    (Number(children[1]) * 60 + Number(children[2]) + Number(children[3]) * 60 + Number(children[4])) * 1000;
  return { code, output, wallMs, cpuMs };
}
