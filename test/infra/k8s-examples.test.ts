import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/processes';
import { find, kubectlPath, podSpec, render, schemaProblems, type K8sObject } from './k8s-render';

/**
 * The example manifests of infra/k8s/examples, applied on their own next to an overlay: valid
 * against the Kubernetes schemas (unknown fields included), and consistent with what the overlay
 * deploys (the Service the Ingress routes to, the host of PUBLIC_BASE_URL, the NetworkPolicy that
 * lets the admin Job reach Postgres and Redis, Pod Security "restricted").
 */
jest.setTimeout(60_000);

const dir = path.join(REPO_ROOT, 'infra/k8s/examples');
const examples: K8sObject[] = readdirSync(dir)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJS() as K8sObject));

const kubectl = kubectlPath();
if (!kubectl) console.warn('infra/k8s/examples checks against an overlay skipped: kubectl is not installed');
const itIfKubectl = kubectl ? it : it.skip;
const deployed = () => (kubectl ? render(kubectl, 'plain') : []);

type IngressSpec = {
  ingressClassName: string;
  tls: Array<{ hosts: string[]; secretName: string }>;
  rules: Array<{
    host: string;
    http: {
      paths: Array<{ path: string; pathType: string; backend: { service: { name: string; port: { name: string } } } }>;
    };
  }>;
};

it('validates against the Kubernetes schemas, unknown fields included', () => {
  expect(examples.map((o) => o.kind).sort()).toEqual(['Ingress', 'Job']);
  expect(schemaProblems(examples)).toEqual([]);
});

itIfKubectl("the Ingress serves PUBLIC_BASE_URL's host over TLS, /api and /view only, to the API's Service", () => {
  const objects = deployed();
  const spec = find(examples, 'Ingress', 'testrun-api').spec as unknown as IngressSpec;
  const publicUrl = new URL(find(objects, 'ConfigMap', 'testrun-config').data?.PUBLIC_BASE_URL ?? '');
  expect(publicUrl.protocol).toBe('https:');
  expect(spec.rules.map((r) => r.host)).toEqual([publicUrl.host]);
  expect(spec.tls.map((t) => t.hosts)).toEqual([[publicUrl.host]]);
  expect(spec.tls[0]?.secretName).toBe('testrun-tls');
  const paths = spec.rules.flatMap((r) => r.http.paths);
  expect(paths.map((p) => [p.path, p.pathType]).sort()).toEqual([
    ['/api', 'Prefix'],
    ['/view', 'Prefix'],
  ]);
  for (const { backend } of paths) {
    const service = find(objects, 'Service', backend.service.name).spec as { ports: Array<{ name: string }> };
    expect(service.ports.map((p) => p.name)).toContain(backend.service.port.name);
  }
  // The controller's namespace is one the API's NetworkPolicy admits.
  expect(spec.ingressClassName).toBe('nginx');
  expect(JSON.stringify(find(objects, 'NetworkPolicy', 'testrun-api-ingress').spec)).toContain('ingress-nginx');
});

itIfKubectl('the admin Job runs the api image\'s testrun, reaches Postgres and Redis, and is "restricted"', () => {
  const objects = deployed();
  const job = find(examples, 'Job', 'testrun-admin');
  const pod = podSpec(job);
  const [admin] = pod.containers;
  // The base's image name (an overlay's `images:` rewrites it when the Job is among its resources).
  expect(podSpec(find(objects, 'Deployment', 'testrun-api')).containers[0]?.image).toBe(`${admin?.image}:latest`);
  expect(admin?.envFrom).toEqual(podSpec(find(objects, 'Deployment', 'testrun-api')).containers[0]?.envFrom);
  expect(readFileSync(path.join(REPO_ROOT, 'infra/Dockerfile'), 'utf8')).toContain(
    `ln -s ${(admin as { command?: string[] } | undefined)?.command?.at(-1)} /usr/local/bin/testrun`,
  );
  // What the migration Job, which the base's NetworkPolicies and Pod Security admit, has.
  const migrate = podSpec(find(objects, 'Job', 'testrun-migrate'));
  expect(pod.securityContext).toEqual(migrate.securityContext);
  expect(admin?.securityContext).toEqual(migrate.containers[0]?.securityContext);
  expect(pod.automountServiceAccountToken).toBe(false);
  const egress = find(objects, 'NetworkPolicy', 'testrun-backing-services-egress').spec as {
    podSelector: { matchExpressions: Array<{ values: string[] }> };
  };
  const label = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels[
    'app.kubernetes.io/name'
  ];
  expect(egress.podSelector.matchExpressions[0]?.values).toContain(label);
});
