import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/**
 * What can be checked of infra/Dockerfile without a Docker engine (none runs in CI): the final
 * images start from a supported Node LTS, run as a non-root user under tini, hold only what the
 * production installs assembled (never the build stage with its devDependencies), and the worker
 * gets Debian's Chromium, fonts and ffmpeg where its configuration looks for them.
 */
type Instruction = { op: string; args: string };
type Stage = { name: string; from: string; body: Instruction[] };

/** Instructions per stage: continuation lines joined, comments dropped, ARGs of the FROM lines applied. */
function stages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const args = new Map<string, string>();
  const out: Stage[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const [op = '', ...rest] = line.split(/\s+/);
    const argText = rest.join(' ');
    if (op === 'FROM') {
      const [image = '', , name = ''] = argText
        .replace(/\$\{(\w+)\}/g, (_, v: string) => args.get(v) ?? '')
        .split(/\s+/);
      out.push({ name, from: image, body: [] });
    } else if (op === 'ARG' && out.length === 0) {
      const [key = '', value = ''] = argText.split('=');
      args.set(key, value);
    } else out.at(-1)?.body.push({ op, args: argText });
  }
  return out;
}

const all = stages(readFileSync(path.join(REPO_ROOT, 'infra/Dockerfile'), 'utf8'));
const stage = (name: string) => {
  const found = all.find((s) => s.name === name);
  if (!found) throw new Error(`no stage ${name} in infra/Dockerfile`);
  return found;
};
/** A stage's instructions with those of the stages it builds on, oldest first. */
const lineage = (name: string): Instruction[] => {
  const s = stage(name);
  return all.some((p) => p.name === s.from) ? [...lineage(s.from), ...s.body] : s.body;
};
const base = (name: string): string => {
  const s = stage(name);
  return all.some((p) => p.name === s.from) ? base(s.from) : s.from;
};

describe.each(['api', 'worker'])('the %s image', (target) => {
  it('starts from a supported Node LTS on Debian bookworm-slim', () => {
    expect(base(target)).toMatch(/^node:(22|24)(\.\d+)*-bookworm-slim$/);
  });

  it('runs as a non-root user, under tini', () => {
    const users = lineage(target).filter((i) => i.op === 'USER');
    expect(users.at(-1)?.args).toMatch(/^(node|[1-9]\d*)(:.*)?$/);
    expect(
      lineage(target)
        .filter((i) => i.op === 'ENTRYPOINT')
        .at(-1)?.args,
    ).toBe('["/usr/bin/tini", "--"]');
    expect(lineage(target).some((i) => i.op === 'RUN' && /apt-get install[^&]*\btini\b/.test(i.args))).toBe(true);
  });

  it('copies only a production install, never the build stage', () => {
    const copies = lineage(target).filter((i) => i.op === 'COPY');
    expect(copies.map((i) => /--from=(\S+)/.exec(i.args)?.[1])).toEqual([`${target}-files`]);
    // That stage starts from the build (devDependencies included): it must drop them and install
    // the production dependencies alone.
    const installs = stage(`${target}-files`).body.filter((i) => / install /.test(i.args));
    expect(installs).toHaveLength(1);
    expect(installs[0]?.args).toMatch(/rm -rf node_modules .*&& pnpm install --prod /);
  });
});

it("the worker image has Debian's Chromium, fonts, ffmpeg and bubblewrap where its configuration looks", () => {
  const installs = lineage('worker').filter((i) => i.op === 'RUN' && i.args.includes('apt-get install'));
  const packages = installs.flatMap((i) => i.args.split(/\s+/));
  expect(packages).toEqual(
    expect.arrayContaining(['chromium', 'chromium-headless-shell', 'fonts-liberation', 'ffmpeg', 'bubblewrap']),
  );
  const env = lineage('worker')
    .filter((i) => i.op === 'ENV')
    .map((i) => i.args)
    .join(' ');
  expect(env).toMatch(/CHROMIUM_PATH=\/usr\/bin\/chromium\b/);
  expect(lineage('worker').some((i) => i.op === 'RUN' && i.args.includes('ensure-browser.sh'))).toBe(true);
});

it('.dockerignore keeps local installs, builds, secrets and git out of the build context', () => {
  const ignored = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
  expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git', '.env', '**/.env']));
});
