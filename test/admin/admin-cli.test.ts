import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import type { AppliedProject } from '../../packages/admin/src/operations';
import { hashApiKey, isWellFormedApiKey } from '@testrun/core/api-keys';
import type { Db } from '@testrun/core/db';
import type { KeyCreatedOutput, KeyStateOutput, MemberOutput, WorkspaceOutput } from '../../packages/admin/src';
import type { LinksRevokedOutput, RunLinksRevokedOutput } from '../../packages/admin/src/link-commands';
import type { AdminErrorOutput } from '../../packages/admin/src/run-action';
import { anyString, stringMatching } from '../api/typed';
import { adminJson, runAdmin, spawnAdmin, type AdminResult } from '../support/admin';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { present } from '../support/present';
import { freePort } from '../support/processes';

const ROOT = path.resolve(__dirname, '../..');

/** Runs `testrun admin …` in this process against the test database (test/support/admin.ts). */
const admin = (...args: string[]) => runAdmin(args);

/** The `--json` output of each kind of admin command, as the commands declare it. */
type Outputs = {
  workspace: WorkspaceOutput;
  member: MemberOutput;
  key: KeyCreatedOutput;
  keyState: KeyStateOutput;
  project: AppliedProject;
  linksRevoked: LinksRevokedOutput;
  runLinksRevoked: RunLinksRevokedOutput;
  error: AdminErrorOutput;
};

/** stdout must be exactly one JSON document: the output of a command of this `kind`. */
const json = <K extends keyof Outputs>(result: AdminResult, _kind: K): Outputs[K] => adminJson(result) as Outputs[K];

let db: Db;
const dir = mkdtempSync(path.join(tmpdir(), 'testrun-admin-'));
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

describe('testrun admin', () => {
  it('workspace, member and key lifecycle with --json', async () => {
    const created = await admin('workspace', 'create', '--name', 'Acme CI', '--plan', 'free', '--json');
    expect(created.code).toBe(0);
    const ws = json(created, 'workspace');
    expect(ws).toEqual({
      id: stringMatching(/^ws_/),
      name: 'Acme CI',
      plan: 'free',
      maxActiveRuns: 20,
      monthlyRuns: 1000,
    });
    expect(await db.workspace.findUnique({ where: { id: ws.id } })).toMatchObject({ plan: 'free', maxActiveRuns: 20 });

    const member = json(
      await admin('member', 'add', '--workspace', ws.id, '--email', 'Dev@Example.test', '--json'),
      'member',
    );
    expect(member).toMatchObject({ workspaceId: ws.id, email: 'dev@example.test' });

    const keyResult = await admin(
      'key',
      'create',
      '--workspace',
      ws.id,
      '--creator',
      'dev@example.test',
      '--name',
      'ci',
      '--json',
    );
    const key = json(keyResult, 'key');
    expect(isWellFormedApiKey(key.key)).toBe(true);
    const row = await db.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.hash).toBe(hashApiKey(key.key));
    expect(JSON.stringify(row)).not.toContain(key.key);

    const paused = json(await admin('key', 'pause', key.id, '--json'), 'keyState');
    expect(paused).toMatchObject({ id: key.id, paused: true, revoked: false, plan: 'free', refused: true });
    expect(paused.note).toBeUndefined();

    const upgraded = json(
      await admin('workspace', 'set-plan', ws.id, '--plan', 'team', '--monthly-runs', '777', '--json'),
      'workspace',
    );
    expect(upgraded).toMatchObject({ plan: 'team', maxActiveRuns: 200, monthlyRuns: 777 });

    // On a paid plan the pause has no effect yet, and the output says so.
    const pausedPaid = await admin('key', 'pause', key.id);
    expect(pausedPaid.code).toBe(0);
    expect(pausedPaid.stdout).toMatch(
      /team plan: a paused key keeps working until the workspace returns to the Free plan/,
    );
    expect(json(await admin('key', 'resume', key.id, '--json'), 'keyState')).toMatchObject({
      paused: false,
      refused: false,
    });
    expect(json(await admin('key', 'revoke', key.id, '--json'), 'keyState')).toMatchObject({
      revoked: true,
      refused: true,
    });
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).revokedAt).toBeInstanceOf(Date);

    const removed = await admin('member', 'remove', '--workspace', ws.id, '--email', 'dev@example.test', '--json');
    expect(json(removed, 'member')).toMatchObject({ email: 'dev@example.test', member: false });
    expect(await db.membership.count({ where: { workspaceId: ws.id } })).toBe(0);
  });

  it("suite-run revoke-links bumps the suite run's link version; an unknown id is an error", async () => {
    const t = await createTenant(db);
    const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
    const suiteId = present(applied.suites[0], 'the sample suite').id;
    const { suiteRunId } = await insertSuiteRuns(db, t.workspace.id, suiteId, { baseUrl: 'http://127.0.0.1:2' });
    const id = present(suiteRunId, 'the suite run');
    expect(json(await admin('suite-run', 'revoke-links', id, '--json'), 'linksRevoked')).toEqual({
      suiteRunId: id,
      revoked: true,
    });
    expect((await db.suiteRun.findUniqueOrThrow({ where: { id } })).viewTokenVersion).toBe(1);
    const unknown = await admin('suite-run', 'revoke-links', 'srun_00000000000000000000000000', '--json');
    expect(unknown.code).not.toBe(0);
    expect(json(unknown, 'error').error.message).toMatch(/No suite run "srun_0+"/);

    // A run of the suite run shares its links: the run command says to revoke the suite run's.
    const runId = present((await db.run.findFirst({ where: { suiteRunId: id } }))?.id, 'a run of the suite run');
    const inSuite = await admin('run', 'revoke-links', runId, '--json');
    expect(inSuite.code).not.toBe(0);
    expect(json(inSuite, 'error').error.message).toContain(`suite-run revoke-links ${id}`);
  });

  it("run revoke-links bumps a run's own link version when it is outside a suite run", async () => {
    const t = await createTenant(db);
    const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
    const suiteId = present(applied.suites[0], 'the sample suite').id;
    const { suiteRunId } = await insertSuiteRuns(db, t.workspace.id, suiteId, { baseUrl: 'http://127.0.0.1:2' });
    const run = await db.run.findFirstOrThrow({ where: { suiteRunId: present(suiteRunId, 'the suite run') } });
    await db.run.update({ where: { id: run.id }, data: { suiteRunId: null } });
    expect(json(await admin('run', 'revoke-links', run.id, '--json'), 'runLinksRevoked')).toEqual({
      runId: run.id,
      revoked: true,
    });
    expect((await db.run.findUniqueOrThrow({ where: { id: run.id } })).viewTokenVersion).toBe(1);
    const unknown = await admin('run', 'revoke-links', 'run_00000000000000000000000000', '--json');
    expect(unknown.code).not.toBe(0);
    expect(json(unknown, 'error').error.message).toMatch(/No run "run_0+"/);
  });

  it('errors go to stderr with a non-zero exit; --json prints a JSON error document', async () => {
    const missing = await admin(
      'key',
      'create',
      '--workspace',
      'ws_nope',
      '--creator',
      'a@b.c',
      '--name',
      'x',
      '--json',
    );
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('workspace ws_nope does not exist');
    expect(json(missing, 'error')).toEqual({
      error: { message: 'workspace ws_nope does not exist', errors: [] },
    });
    const badPlan = await admin('workspace', 'create', '--name', 'x', '--plan', 'gold');
    expect(badPlan.code).not.toBe(0);
    expect(badPlan.stderr).toMatch(/gold/);
    expect(badPlan.stdout).toBe('');
  });

  it('project apply: JSON or YAML, idempotent, archives tests removed from the file', async () => {
    const ws = json(await admin('workspace', 'create', '--name', 'Proj', '--plan', 'team', '--json'), 'workspace');
    const file = sampleProject('shop', { count: 3, suites: ['smoke', 'checkout'] });
    const jsonFile = path.join(dir, 'shop.json');
    writeFileSync(jsonFile, JSON.stringify(file));
    const first = json(await admin('project', 'apply', '--workspace', ws.id, '--file', jsonFile, '--json'), 'project');
    expect(first).toMatchObject({ projectId: stringMatching(/^prj_/), slug: 'shop' });
    // Applying is a deployment, activated: version 1, the project's active one, deployed by no key.
    expect(first).toMatchObject({ deploymentId: stringMatching(/^dep_/), version: 1 });
    expect(await db.project.findFirstOrThrow({ where: { workspaceId: ws.id } })).toMatchObject({
      activeDeploymentId: first.deploymentId,
    });
    expect(
      await db.deployment.findMany({ where: { workspaceId: ws.id }, select: { version: true, createdByKeyId: true } }),
    ).toEqual([{ version: 1, createdByKeyId: null }]);
    expect(first.suites.map((s) => s.slug)).toEqual(['smoke', 'checkout']);
    expect(first.suites[0]?.tests).toEqual([
      { id: stringMatching(/^tst_/), key: 't1', name: 'smoke test 1' },
      { id: anyString(), key: 't2', name: 'smoke test 2' },
      { id: anyString(), key: 't3', name: 'smoke test 3' },
    ]);

    // The same content as YAML: same ids, nothing new.
    const yamlFile = path.join(dir, 'shop.yaml');
    writeFileSync(yamlFile, toYaml(file));
    const again = json(await admin('project', 'apply', '--workspace', ws.id, '--file', yamlFile, '--json'), 'project');
    expect(again).toEqual(first);
    expect(await db.test.count({ where: { workspaceId: ws.id } })).toBe(6);

    // Drop test t3 of smoke and the whole checkout suite: archived, not deleted.
    const [smoke] = file.suites;
    if (!smoke) throw new Error('the sample project has a smoke suite');
    const smaller = { ...file, suites: [{ ...smoke, tests: smoke.tests.slice(0, 2) }] };
    writeFileSync(jsonFile, JSON.stringify(smaller));
    const third = json(await admin('project', 'apply', '--workspace', ws.id, '--file', jsonFile, '--json'), 'project');
    expect(third.suites).toHaveLength(1);
    const ids = (applied: AppliedProject) => applied.suites[0]?.tests.map((t) => t.id);
    expect(ids(third)).toEqual(ids(first)?.slice(0, 2));
    expect(await db.test.count({ where: { workspaceId: ws.id } })).toBe(6);
    expect(await db.test.count({ where: { workspaceId: ws.id, archivedAt: { not: null } } })).toBe(4);
    expect(await db.suite.count({ where: { workspaceId: ws.id, archivedAt: { not: null } } })).toBe(1);
  });

  it("the README quickstart's examples/shop.yaml applies as it is, with the TARGET_ALLOW the Quickstart exports", async () => {
    const ws = json(await admin('workspace', 'create', '--name', 'Example', '--plan', 'team', '--json'), 'workspace');
    const file = path.join(ROOT, 'examples/shop.yaml');
    const exported = /^export PORT=\d+ TARGET_ALLOW=(\S+)$/m.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
    const env = { TARGET_ALLOW: present(exported?.[1], "the Quickstart's TARGET_ALLOW") };
    const args = ['project', 'apply', '--workspace', ws.id, '--file', file, '--json'];
    const applied = json(await runAdmin(args, { env }), 'project');
    expect(applied.slug).toBe('shop');
    expect(applied.suites.map((s) => [s.slug, s.tests.length])).toEqual([['smoke', 2]]);
  });

  it("a bad project file is refused with every problem's path and reason, and changes nothing", async () => {
    const ws = json(await admin('workspace', 'create', '--name', 'Bad', '--plan', 'team', '--json'), 'workspace');
    const bad = {
      slug: 'Bad Slug!',
      name: 'x',
      baseUrl: 'not a url',
      suites: [
        {
          slug: 'smoke',
          name: 'S',
          tests: [{ key: 'a', name: 'A', steps: [{ action: 'teleport' }, { action: 'click' }] }],
        },
      ],
    };
    const file = path.join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify(bad));
    const result = await admin('project', 'apply', '--workspace', ws.id, '--file', file, '--json');
    expect(result.code).not.toBe(0);
    const doc = json(result, 'error');
    const paths = doc.error.errors.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/slug',
        '/baseUrl',
        '/suites/0/tests/0/steps/0/action',
        '/suites/0/tests/0/steps/1/selector',
      ]),
    );
    for (const p of ['/slug', '/baseUrl', '/suites/0/tests/0/steps/0/action']) expect(result.stderr).toContain(p);
    expect(await db.project.count({ where: { workspaceId: ws.id } })).toBe(0);

    const unparsable = path.join(dir, 'broken.yaml');
    writeFileSync(unparsable, 'slug: [unclosed');
    const broken = await admin('project', 'apply', '--workspace', ws.id, '--file', unparsable);
    expect(broken.code).not.toBe(0);
    expect(broken.stderr).toContain('is not valid YAML');
    expect(await db.project.count({ where: { workspaceId: ws.id } })).toBe(0);
  });

  it('workspace set --target-deny narrows the policy; project apply refuses a base URL the policy refuses', async () => {
    const ws = json(await admin('workspace', 'create', '--name', 'Targets', '--plan', 'team', '--json'), 'workspace');
    const bad = await admin('workspace', 'set', ws.id, '--target-deny', '10.0.0.0/33');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--target-deny: "10.0.0.0/33" has a prefix length outside 0-32');

    // A free port is where the test set-up's fixture servers listen, which its TARGET_ALLOW opens.
    const port = await freePort();
    const set = await admin('workspace', 'set', ws.id, '--target-deny', `*.internal.example, 127.0.0.1:${port}`);
    expect(set.code).toBe(0);
    const stored = await db.workspace.findUniqueOrThrow({ where: { id: ws.id }, select: { targetDeny: true } });
    expect(stored.targetDeny).toBe(`*.internal.example,127.0.0.1:${port}`);

    const apply = async (baseUrl: string) => {
      const file = path.join(dir, `targets-${Buffer.from(baseUrl).toString('hex')}.json`);
      writeFileSync(file, JSON.stringify(sampleProject('targets', { baseUrl })));
      return admin('project', 'apply', '--workspace', ws.id, '--file', file);
    };
    const metadata = await apply('http://0xA9FEA9FE/');
    expect(metadata.code).not.toBe(0);
    expect(metadata.stderr).toContain('169.254.169.254 is a cloud metadata endpoint (rule: metadata)');
    // The port is allowed in the test set-up (TARGET_ALLOW), but this workspace denies it.
    const denied = await apply(`http://127.0.0.1:${port}`);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain('(rule: workspace_deny)');
    expect(await db.project.count({ where: { workspaceId: ws.id } })).toBe(0);

    expect((await admin('workspace', 'set', ws.id, '--target-deny', '')).code).toBe(0);
    expect((await apply(`http://127.0.0.1:${port}`)).code).toBe(0);
    expect(await db.project.count({ where: { workspaceId: ws.id } })).toBe(1);
  });
});

describe('the testrun binary', () => {
  it("runs admin commands with the process's environment, stdin, stdout, stderr and exit code", async () => {
    // The built binary as operators run it; every other test runs the same program in this process.
    const created = await spawnAdmin(['workspace', 'create', '--name', 'Binary', '--plan', 'team', '--json']);
    expect(created.code).toBe(0);
    const ws = json(created, 'workspace');
    expect(await db.workspace.findUnique({ where: { id: ws.id } })).toMatchObject({ name: 'Binary', plan: 'team' });

    const value = 'binary-stdin-value-7e1f';
    const set = await spawnAdmin(['secret', 'set', '--workspace', ws.id, '--name', 'TOKEN', '--json'], {
      stdin: `${value}\n`,
    });
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('"state":"created"');
    expect(set.stdout + set.stderr).not.toContain(value);
    expect(await db.secretVariable.count({ where: { workspaceId: ws.id } })).toBe(1);

    const missing = await spawnAdmin(['key', 'create', '--workspace', 'ws_nope', '--creator', 'a@b.c', '--name', 'x']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('workspace ws_nope does not exist');
    expect(missing.stdout).toBe('');

    const badPlan = await spawnAdmin(['workspace', 'create', '--name', 'x', '--plan', 'gold']);
    expect(badPlan.code).not.toBe(0);
    expect(badPlan.stderr).toMatch(/gold/);
    expect(badPlan.stdout).toBe('');
  });
});
