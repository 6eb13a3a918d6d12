import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/processes';

/** The overlays a deployment applies (infra/k8s/overlays/<name>). */
export const OVERLAYS = ['s3', 'shared-volume', 'production', 'plain'] as const;
export type Overlay = (typeof OVERLAYS)[number];

/** The part of a rendered object the checks read; the schemas check the rest. */
export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  // Each kind's spec is read through the typed views below.
  spec?: Record<string, unknown>;
};

type EnvVar = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Probe = { httpGet?: { path: string; port: string | number } };
export type Container = {
  name: string;
  image: string;
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: SecurityContext;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
};
type SecurityContext = {
  runAsNonRoot?: boolean;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type: string; localhostProfile?: string };
};
export type PodSpec = {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  automountServiceAccountToken?: boolean;
  volumes?: Array<{ name: string; persistentVolumeClaim?: unknown; emptyDir?: { medium?: string } }>;
};

/** kubectl's built-in kustomize, or null when kubectl is not installed. */
export function kubectlPath(): string | null {
  const found = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : null;
}

/** `kubectl kustomize` of one overlay, as objects. */
export function render(kubectl: string, overlay: Overlay): K8sObject[] {
  const yamlText = execFileSync(kubectl, ['kustomize', path.join(REPO_ROOT, 'infra/k8s/overlays', overlay)], {
    encoding: 'utf8',
  });
  return parseAllDocuments(yamlText).map((doc) => doc.toJS() as K8sObject);
}

/** The problems test/infra/validate-k8s.mjs finds in `objects` (schemas and unknown fields). */
export function schemaProblems(objects: readonly K8sObject[]): string[] {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'validate-k8s.mjs')], {
    input: JSON.stringify(objects),
    encoding: 'utf8',
    cwd: REPO_ROOT,
  });
  return JSON.parse(out) as string[];
}

export function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found)
    throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

/** The pod spec of a Deployment or Job. */
export function podSpec(object: K8sObject): PodSpec {
  return (object.spec as { template: { spec: PodSpec } }).template.spec;
}

/**
 * The environment the container's process sees, as far as the rendered objects tell: its
 * ConfigMaps' and Secrets' (when rendered) entries, then its own `value`s.
 */
export function containerEnv(objects: readonly K8sObject[], container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    const source = objects.find(
      (o) => o.kind === (from.configMapRef ? 'ConfigMap' : 'Secret') && o.metadata.name === ref?.name,
    );
    Object.assign(env, source?.data ?? {}, source?.stringData ?? {});
  }
  for (const variable of container.env ?? []) if (variable.value !== undefined) env[variable.name] = variable.value;
  return env;
}
