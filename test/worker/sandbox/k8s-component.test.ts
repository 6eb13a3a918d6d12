import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { find, kubectlPath, podSpec, schemaProblems, type K8sObject } from '../../infra/k8s-render';

/*
 * infra/k8s/components/sandbox, added to the plain overlay as an operator would: the worker under
 * gVisor, root in its container with the capabilities docs/SANDBOX.md lists, AppArmor unconfined
 * and the repository's seccomp profile; everything else of the overlay unchanged.
 */

jest.setTimeout(60_000);

const K8S = path.resolve(__dirname, '../../../infra/k8s');
const kubectl = kubectlPath();
if (!kubectl) console.warn('the sandbox component is not rendered: kubectl is not installed');
const testIfKubectl = kubectl ? test : test.skip;

async function renderWithComponent(): Promise<K8sObject[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'testrun-k8s-sandbox-'));
  try {
    const relative = path.relative(dir, K8S);
    await writeFile(
      path.join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        `  - ${relative}/overlays/plain`,
        'components:',
        `  - ${relative}/components/sandbox`,
        '',
      ].join('\n'),
    );
    const text = execFileSync(kubectl as string, ['kustomize', dir], { encoding: 'utf8' });
    return parseAllDocuments(text).map((doc) => doc.toJS() as K8sObject);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

testIfKubectl('the worker runs under gVisor, as root, with what bubblewrap, mounts and cgroups need', async () => {
  const objects = await renderWithComponent();
  const runtimeClass = find(objects, 'RuntimeClass', 'gvisor') as K8sObject & { handler: string };
  expect(runtimeClass.handler).toBe('runsc');
  const worker = find(objects, 'Deployment', 'testrun-worker');
  expect(schemaProblems([worker])).toEqual([]);
  const pod = podSpec(worker) as ReturnType<typeof podSpec> & { runtimeClassName?: string };
  expect(pod.runtimeClassName).toBe('gvisor');
  const container = pod.containers.find((c) => c.name === 'worker');
  const context = container?.securityContext as Record<string, unknown> & {
    capabilities: { drop: string[]; add: string[] };
    seccompProfile: { type: string; localhostProfile: string };
  };
  expect(context).toMatchObject({ runAsUser: 0, runAsNonRoot: false, privileged: true });
  expect(context.capabilities.drop).toEqual(['ALL']);
  expect([...context.capabilities.add].sort()).toEqual(
    [
      'CHOWN',
      'DAC_OVERRIDE',
      'FOWNER',
      'KILL',
      'NET_ADMIN',
      'SETGID',
      'SETPCAP',
      'SETUID',
      'SYS_ADMIN',
      'SYS_CHROOT',
    ].sort(),
  );
  expect(context.appArmorProfile).toEqual({ type: 'Unconfined' });
  expect(context.seccompProfile).toEqual({ type: 'Localhost', localhostProfile: 'testrun-worker.json' });
  expect(existsSync(path.resolve(K8S, '../seccomp/testrun-worker.json'))).toBe(true);
  // The rest of the worker is the overlay's: its image, probes and volumes.
  expect(container?.image).toMatch(/testrun-worker/);
  expect(container?.livenessProbe?.httpGet?.path).toBe('/healthz');
  expect(pod.volumes?.map((v) => v.name)).toEqual(expect.arrayContaining(['tmp', 'dshm']));
});

test("the worker's seccomp profile lets bubblewrap load the sandbox's own filter and setpriv make the program its user", () => {
  const profile = JSON.parse(readFileSync(path.resolve(K8S, '../seccomp/testrun-worker.json'), 'utf8')) as {
    defaultAction: string;
    syscalls: { names: string[]; action: string }[];
  };
  expect(profile.defaultAction).toBe('SCMP_ACT_ALLOW');
  const refused = profile.syscalls.filter((rule) => rule.action !== 'SCMP_ACT_ALLOW').flatMap((rule) => rule.names);
  // seccomp(2) and prctl(PR_SET_SECCOMP) load it; setpriv changes the user, its groups and capabilities.
  for (const call of ['seccomp', 'prctl', 'setresuid', 'setresgid', 'setgroups', 'capset', 'unshare', 'mount'])
    expect([call, refused.includes(call)]).toEqual([call, false]);
});
