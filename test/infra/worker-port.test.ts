import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../support/processes';

/**
 * The worker's HTTP port (/metrics, /healthz, /readyz) is one number wherever a deployment or a
 * page names it: the image, the manifests, the probes' Service and NetworkPolicy, and the docs. The
 * worker itself has no port by default (several on one machine never clash); 9464, Prometheus's
 * registered exporter port, is what apps/worker/src/config.ts says the deployments use.
 */
const WORKER_PORT = '9464';

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const manifests = readdirSync(path.join(REPO_ROOT, 'infra/k8s'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => `infra/k8s/${f}`);

/** Every `file:line` whose text matches `pattern`, with the port-like numbers on that line. */
function portsOnLines(files: readonly string[], pattern: RegExp): Array<{ at: string; ports: string[] }> {
  return files.flatMap((file) =>
    read(file)
      .split('\n')
      .flatMap((line, i) =>
        pattern.test(line) ? [{ at: `${file}:${i + 1}`, ports: line.match(/\b(?:9\d{3})\b/g) ?? [] }] : [],
      ),
  );
}

it("names the worker's port the same in the config's comment, the image, the manifests and the docs", () => {
  expect(read('apps/worker/src/config.ts')).toContain(`the Kubernetes manifests use ${WORKER_PORT}`);
  const docs = ['README.md', 'docs/WORKER.md', 'docs/METRICS.md', 'docs/OPERATIONS.md', 'infra/README.md'];
  const seen = [
    ...portsOnLines(['infra/Dockerfile'], /WORKER_HTTP_PORT|EXPOSE/),
    ...portsOnLines(docs, /WORKER_HTTP_PORT/),
    // In the manifests, any 9xxx number is the worker's (the API listens on 3000), but the s3
    // overlay's example object store's 9000.
    ...portsOnLines(manifests, /\b9(?!000)\d{3}\b/),
  ];
  expect(seen.filter((s) => s.ports.length > 0).length).toBeGreaterThanOrEqual(8);
  const other = seen.filter((s) => s.ports.some((p) => p !== WORKER_PORT));
  expect(other).toEqual([]);
});
