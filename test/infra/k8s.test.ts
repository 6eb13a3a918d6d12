import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { readApiConfig } from '../../apps/api/src/config';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { apiClient, startApi } from '../e2e/support';
import { createTenant, sampleProject, testDb } from '../support/harness';
import { REPO_ROOT } from '../support/processes';
import { present } from '../support/present';
import {
  containerEnv,
  find,
  kubectlPath,
  OVERLAYS,
  podSpec,
  render,
  schemaProblems,
  type Container,
  type K8sObject,
  type Overlay,
} from './k8s-render';

/**
 * Renders every overlay of infra/k8s with `kubectl kustomize` and checks what a cluster would get:
 * every object valid against the Kubernetes, KEDA and prometheus-operator schemas with no unknown
 * field, Pod Security "restricted" on every container, the worker's probes and grace period, the
 * NetworkPolicies' reach, the settings accepted by the services' own config readers, and the KEDA
 * trigger's query counting the backlog on a real database.
 */
jest.setTimeout(120_000);

const kubectl = kubectlPath();
if (!kubectl) console.warn('infra/k8s checks skipped: kubectl (with its built-in kustomize) is not installed');
const describeIfKubectl = kubectl ? describe : describe.skip;

const rendered = new Map<Overlay, K8sObject[]>();
const objects = (overlay: Overlay) => rendered.get(overlay) ?? [];
const workloads = (overlay: Overlay) => objects(overlay).filter((o) => o.kind === 'Deployment' || o.kind === 'Job');
const container = (overlay: Overlay, name: string) =>
  present(podSpec(find(objects(overlay), 'Deployment', name)).containers[0], `${name}'s container`);
type PodTemplateOwner = { template: { metadata?: { annotations?: Record<string, string> } } };
type Rule = { to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }> };
type PolicySpec = { podSelector: Record<string, unknown>; policyTypes: string[]; egress?: Rule[]; ingress?: unknown[] };
const policySpec = (o: K8sObject) => o.spec as PolicySpec;

beforeAll(() => {
  if (kubectl) for (const overlay of OVERLAYS) rendered.set(overlay, render(kubectl, overlay));
});

describeIfKubectl.each(OVERLAYS)('overlay %s', (overlay) => {
  it('validates against the Kubernetes, KEDA and prometheus-operator schemas, unknown fields included', () => {
    expect(objects(overlay).length).toBeGreaterThan(10);
    expect(schemaProblems(objects(overlay))).toEqual([]);
  });

  it('runs every container as Pod Security "restricted" asks, with a read-only root filesystem', () => {
    for (const workload of workloads(overlay)) {
      const pod = podSpec(workload);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
        // The worker's own profile (still "restricted"): it lets bubblewrap make Chromium's network namespace.
        const seccompProfile =
          c.name === 'worker'
            ? { type: 'Localhost', localhostProfile: 'testrun-worker.json' }
            : { type: 'RuntimeDefault' };
        expect({ workload: workload.metadata.name, securityContext: c.securityContext }).toEqual({
          workload: workload.metadata.name,
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
            seccompProfile,
          },
        });
      }
    }
  });

  it('probes the worker on its named HTTP port, gives Chromium a memory-backed /dev/shm', () => {
    const worker = container(overlay, 'testrun-worker');
    const env = containerEnv(objects(overlay), worker);
    const port = worker.ports?.find((p) => p.name === 'http');
    expect(port?.containerPort).toBe(Number(env.WORKER_HTTP_PORT));
    expect(worker.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(worker.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    const pod = podSpec(find(objects(overlay), 'Deployment', 'testrun-worker'));
    const shm = worker.volumeMounts?.find((m) => m.mountPath === '/dev/shm');
    expect(pod.volumes?.find((v) => v.name === shm?.name)?.emptyDir?.medium).toBe('Memory');
    expect(find(objects(overlay), 'PodDisruptionBudget', 'testrun-worker').spec).toMatchObject({ maxUnavailable: 1 });
  });

  it("gives the worker more time to stop than its drain bound, read by the worker's own config reader", () => {
    const worker = container(overlay, 'testrun-worker');
    const config = readWorkerConfig({ TESTRUN_SECRET: 'x'.repeat(40), ...containerEnv(objects(overlay), worker) });
    const grace = podSpec(find(objects(overlay), 'Deployment', 'testrun-worker')).terminationGracePeriodSeconds ?? 30;
    // The drain, then closing the browser and the connections: at least 10 s more.
    expect(grace * 1000).toBeGreaterThanOrEqual(config.drainTimeoutMs + 10_000);
    // Chromium in its own network namespace: never switched off by the manifests.
    expect(config.browserNetworkIsolation).toBe('on');
    const api = container(overlay, 'testrun-api');
    const apiConfig = readApiConfig({ TESTRUN_SECRET: 'x'.repeat(40), ...containerEnv(objects(overlay), api) });
    expect(api.ports?.find((p) => p.name === 'http')?.containerPort).toBe(apiConfig.port);
  });

  it('denies by default, lets the worker reach the internet but not private ranges nor metadata', () => {
    const policies = objects(overlay).filter((o) => o.kind === 'NetworkPolicy');
    expect(policies.map(policySpec)).toContainEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const selects = (o: K8sObject, app: string) => {
      const { podSelector } = policySpec(o) as { podSelector: { matchLabels?: Record<string, string> } };
      const expressions = (podSelector as { matchExpressions?: Array<{ values: string[] }> }).matchExpressions ?? [];
      return (
        Object.keys(podSelector).length === 0 ||
        podSelector.matchLabels?.['app.kubernetes.io/name'] === app ||
        expressions.some((e) => e.values.includes(app))
      );
    };
    const workerEgress = policies
      .filter((o) => selects(o, 'testrun-worker'))
      .flatMap((o) => policySpec(o).egress ?? []);
    // No rule allows everything (a rule without `to` matches every destination).
    expect(workerEgress.filter((rule) => rule.to === undefined)).toEqual([]);
    const wide = workerEgress.flatMap((r) => r.to ?? []).filter((peer) => peer.ipBlock?.cidr === '0.0.0.0/0');
    expect(wide).toHaveLength(1);
    for (const range of ['169.254.0.0/16', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8'])
      expect(wide[0]?.ipBlock?.except).toContain(range);
    const apiIngress = policies.filter((o) => selects(o, 'testrun-api') && policySpec(o).ingress);
    expect(apiIngress.flatMap((o) => policySpec(o).ingress ?? [])).toEqual([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ],
        ports: [{ protocol: 'TCP', port: 3000 }],
      },
    ]);
  });

  it('scrapes both /metrics with ServiceMonitors whose Services exist (plain: by pod annotations)', () => {
    for (const app of ['testrun-api', 'testrun-worker']) {
      if (overlay === 'plain') {
        const pod = (find(objects(overlay), 'Deployment', app).spec as PodTemplateOwner).template;
        const port = container(overlay, app).ports?.find((p) => p.name === 'http')?.containerPort;
        expect(pod.metadata?.annotations).toEqual({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(port),
          'prometheus.io/path': '/metrics',
        });
        continue;
      }
      const monitor = find(objects(overlay), 'ServiceMonitor', app).spec as {
        selector: { matchLabels: Record<string, string> };
        endpoints: Array<{ port: string; path: string }>;
      };
      expect(monitor.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
      const services = objects(overlay).filter(
        (o) => o.kind === 'Service' && o.metadata.labels?.['app.kubernetes.io/name'] === app,
      );
      const ports = services.flatMap((s) => (s.spec as { ports: Array<{ name: string }> }).ports.map((p) => p.name));
      expect(ports).toContain('http');
    }
  });
});

it("the worker's seccomp profile lets bubblewrap make Chromium's namespaces and refuses the kernel's riskier calls", () => {
  const profile = JSON.parse(readFileSync(path.join(REPO_ROOT, 'infra/seccomp/testrun-worker.json'), 'utf8')) as {
    defaultAction: string;
    syscalls: Array<{ names: string[]; action: string }>;
  };
  const refused = new Set(profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ERRNO').flatMap((r) => r.names));
  expect(profile.defaultAction).toBe('SCMP_ACT_ALLOW');
  for (const needed of ['clone', 'unshare', 'mount', 'umount2', 'pivot_root']) expect(refused.has(needed)).toBe(false);
  for (const risky of [
    'setns',
    'ptrace',
    'bpf',
    'kexec_load',
    'init_module',
    'keyctl',
    'userfaultfd',
    'io_uring_setup',
  ])
    expect(refused.has(risky)).toBe(true);
});

describeIfKubectl('where artifacts live', () => {
  const envOf = (overlay: Overlay, c: Container) => c.env ?? [];

  it('s3 and production: no shared volume, the object store credentials by Secret reference', () => {
    for (const overlay of ['s3', 'production'] as const) {
      expect(objects(overlay).filter((o) => o.kind === 'PersistentVolumeClaim')).toEqual([]);
      expect(
        workloads(overlay)
          .flatMap((w) => podSpec(w).volumes ?? [])
          .filter((v) => v.persistentVolumeClaim),
      ).toEqual([]);
      const config = find(objects(overlay), 'ConfigMap', 'testrun-config').data ?? {};
      expect(config.ARTIFACTS_URL).toMatch(/^s3:\/\/[^/]+\/.+/);
      expect(Object.keys(config).filter((k) => k.startsWith('AWS_SECRET') || k.startsWith('AWS_ACCESS'))).toEqual([]);
      for (const app of ['testrun-api', 'testrun-worker']) {
        const refs = envOf(overlay, container(overlay, app)).filter((v) => v.name.startsWith('AWS_'));
        expect(refs.map((v) => [v.name, v.value, v.valueFrom?.secretKeyRef?.name])).toEqual([
          ['AWS_ACCESS_KEY_ID', undefined, 'testrun-object-store'],
          ['AWS_SECRET_ACCESS_KEY', undefined, 'testrun-object-store'],
        ]);
      }
    }
  });

  it('shared-volume: one ReadWriteMany claim mounted at ARTIFACTS_DIR by the API and the workers', () => {
    const claim = find(objects('shared-volume'), 'PersistentVolumeClaim', 'testrun-artifacts');
    expect(claim.spec?.accessModes).toEqual(['ReadWriteMany']);
    const dir = find(objects('shared-volume'), 'ConfigMap', 'testrun-config').data?.ARTIFACTS_DIR;
    for (const app of ['testrun-api', 'testrun-worker'])
      expect(container('shared-volume', app).volumeMounts).toContainEqual({ name: 'artifacts', mountPath: dir });
  });

  it('plain: only built-in kinds (no KEDA, no prometheus-operator), a fixed worker count, the worker still isolated', () => {
    const builtIn = /^(v1|apps\/v1|batch\/v1|policy\/v1|autoscaling\/v2|networking\.k8s\.io\/v1)$/;
    expect(
      objects('plain')
        .filter((o) => !builtIn.test(o.apiVersion))
        .map((o) => `${o.apiVersion} ${o.kind}`),
    ).toEqual([]);
    expect(find(objects('plain'), 'Deployment', 'testrun-worker').spec?.replicas).toBeGreaterThanOrEqual(1);
    // Everything the s3 overlay has but the CRDs' kinds, unchanged in what the checks above read.
    const crdKinds = new Set(['ScaledObject', 'TriggerAuthentication', 'ServiceMonitor']);
    const names = (overlay: Overlay) =>
      objects(overlay)
        .filter((o) => !crdKinds.has(o.kind))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort();
    expect(names('plain')).toEqual(names('s3'));
    expect(container('plain', 'testrun-worker').securityContext).toEqual(
      container('s3', 'testrun-worker').securityContext,
    );
  });

  it('production: released images, no placeholder Secret that an apply would write over the real one', () => {
    expect(objects('production').filter((o) => o.kind === 'Secret')).toEqual([]);
    for (const w of workloads('production'))
      for (const c of podSpec(w).containers) expect(c.image).toMatch(/^[^:]+\/[^:]+:(?!latest$)[\w.-]+$/);
  });
});

describeIfKubectl("KEDA's trigger", () => {
  let db: Db;
  beforeAll(() => {
    db = testDb();
  });
  afterAll(() => db.$disconnect());

  it('counts the runs waiting or running, which BullMQ keeps out of its wait list', async () => {
    const scaled = find(objects('s3'), 'ScaledObject', 'testrun-worker').spec as {
      scaleTargetRef: { name: string };
      triggers: Array<{ type: string; metadata: { query: string }; authenticationRef: { name: string } }>;
    };
    expect(scaled.scaleTargetRef.name).toBe('testrun-worker');
    const trigger = present(scaled.triggers[0], 'the trigger');
    const auth = find(objects('s3'), 'TriggerAuthentication', trigger.authenticationRef.name).spec;
    expect(auth).toEqual({
      secretTargetRef: [{ parameter: 'connection', name: 'testrun-secrets', key: 'SCALER_DATABASE_URL' }],
    });

    // A suite of 3 posted with no worker running: 3 queued runs, 3 jobs in Redis.
    const api = await startApi();
    const tenant = await createTenant(db);
    await applyProject(db, tenant.workspace.id, sampleProject('keda', { count: 3 }));
    await apiClient(api.url, tenant.key).createSuiteRun({ projectSlug: 'keda', suiteSlug: 'smoke' });
    await api.close();
    const [{ count }] = await db.$queryRawUnsafe<[{ count: bigint }]>(trigger.metadata.query);
    expect(Number(count)).toBe(3);
    // What a redis listLength trigger on "<prefix>:runs:wait" would have seen: nothing.
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = process.env.REDIS_PREFIX ?? 'testrun';
    const [wait, prioritized] = [
      await redis.llen(`${prefix}:runs:wait`),
      await redis.zcard(`${prefix}:runs:prioritized`),
    ];
    await redis.quit();
    expect({ wait, prioritized }).toEqual({ wait: 0, prioritized: 3 });
  });
});
