import type { BundleStored } from '@testrun/contracts';
import { TestrunApiError } from './errors';
import type { TestrunClient } from './testrun-client';

const bundlePath = (projectSlug: string, digest: string) =>
  `/api/v1/projects/${encodeURIComponent(projectSlug)}/bundles/${encodeURIComponent(digest)}`;

/** HEAD …/bundles/{digest}: whether the workspace already has the bundle (a 404 is false). */
export async function hasBundle(client: TestrunClient, projectSlug: string, digest: string): Promise<boolean> {
  try {
    await client.transport.request<undefined>('HEAD', bundlePath(projectSlug, digest));
    return true;
  } catch (e) {
    if (e instanceof TestrunApiError && e.status === 404) return false;
    throw e;
  }
}

/** PUT …/bundles/{digest}: uploads a bundle's .tar.gz bytes; `created` false when it was already there. */
export async function uploadBundle(
  client: TestrunClient,
  projectSlug: string,
  digest: string,
  bytes: Uint8Array<ArrayBuffer>,
): Promise<{ stored: BundleStored; created: boolean }> {
  const res = await client.transport.request<BundleStored>('PUT', bundlePath(projectSlug, digest), { bytes });
  return { stored: res.body, created: res.status === 201 };
}
