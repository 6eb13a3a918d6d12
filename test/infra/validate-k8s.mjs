// @ts-check
// Validates Kubernetes objects against the schemas of kubernetes-models (Kubernetes itself),
// @kubernetes-models/keda and @kubernetes-models/prometheus-operator, unknown fields included.
//
//   node test/infra/validate-k8s.mjs < objects.json     (a JSON array of objects)
//
// Prints a JSON array of problems ("<kind>/<name>: ..."), empty when every object is valid. A
// separate ESM process because these packages are ES modules only, which jest's CommonJS
// transform does not load.
//
// The packages' compiled validators ignore properties their schemas do not name, as the API
// server's non-strict decoding does. Strictness is added here by probing: every property of an
// object is replaced in turn by a value of no JSON type (a Symbol); a property the schema knows
// then fails validation at exactly its own path, an unknown one does not.
import * as coreV1 from 'kubernetes-models/v1';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as batchV1 from 'kubernetes-models/batch/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as kedaV1alpha1 from '@kubernetes-models/keda/keda.sh/v1alpha1';
import * as monitoringV1 from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

/** @typedef {{ new (data: unknown): { validate(): void }, apiVersion?: string, kind?: string }} ModelClass */

/** `apiVersion/kind` -> the model class that validates it. */
const models = new Map();
for (const group of [coreV1, appsV1, batchV1, autoscalingV2, policyV1, networkingV1, kedaV1alpha1, monitoringV1]) {
  for (const value of Object.values(group)) {
    const model = /** @type {ModelClass} */ (value);
    if (typeof model === 'function' && model.apiVersion && model.kind)
      models.set(`${model.apiVersion}/${model.kind}`, model);
  }
}

const PROBE = Symbol('probe');

/**
 * @param {ModelClass} model
 * @param {unknown} object
 * @returns {Array<{ instancePath: string, message?: string }>}
 */
function errorsOf(model, object) {
  try {
    new model(object).validate();
    return [];
  } catch (e) {
    const errors = /** @type {{ errors?: Array<{ instancePath: string, message?: string }> }} */ (e).errors;
    if (!errors) throw e;
    return errors;
  }
}

/** @param {string} key */
const pointer = (key) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON pointers of every property below `value` whose schema does not know it.
 * @param {ModelClass} model
 * @param {Record<string, unknown>} root
 * @param {unknown} value
 * @param {string} at
 * @returns {string[]}
 */
function unknownFields(model, root, value, at) {
  if (value === null || typeof value !== 'object') return [];
  const unknown = [];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  for (const [key, child] of entries) {
    const path = `${at}/${pointer(key)}`;
    const container = /** @type {Record<string, unknown>} */ (value);
    container[key] = PROBE;
    const known = errorsOf(model, root).some((error) => error.instancePath === path);
    container[key] = child;
    if (known) unknown.push(...unknownFields(model, root, child, path));
    else unknown.push(path);
  }
  return unknown;
}

const input = /** @type {Array<Record<string, any>>} */ (
  JSON.parse(
    await new Promise((resolve) => {
      let text = '';
      process.stdin.on('data', (chunk) => (text += chunk));
      process.stdin.on('end', () => resolve(text));
    }),
  )
);

const problems = [];
for (const object of input) {
  const name = `${object.kind}/${object.metadata?.name}`;
  const model = models.get(`${object.apiVersion}/${object.kind}`);
  if (!model) {
    problems.push(`${name}: no schema for ${object.apiVersion} ${object.kind}`);
    continue;
  }
  const errors = errorsOf(model, object);
  if (errors.length > 0) {
    problems.push(...errors.map((e) => `${name}: ${e.instancePath || '/'} ${e.message ?? 'is invalid'}`));
    continue;
  }
  for (const path of unknownFields(model, object, object, '')) problems.push(`${name}: unknown field ${path}`);
}
process.stdout.write(JSON.stringify(problems));
