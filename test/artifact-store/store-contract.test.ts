import { mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { describeArtifactStoreContract } from '../support/artifact-store-contract';
import { startS3Server } from '../support/s3-server';

/** The one artifact-store contract, against the local directory store and the S3 store on a real S3 server. */

/** File descriptors of this process open on a file below `root`. */
function handlesBelow(root: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${root}/`);
    } catch {
      return false;
    }
  }).length;
}

describeArtifactStoreContract('the local', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'testrun-contract-'));
  return Promise.resolve({
    store: new LocalArtifactStore(root),
    openReads: () => Promise.resolve(handlesBelow(root)),
    breakBackend: () => {
      // A file where the directory was: every call fails as on a lost mount.
      rmSync(root, { recursive: true, force: true });
      writeFileSync(root, '');
      return Promise.resolve();
    },
    close: () => Promise.resolve(rmSync(root, { recursive: true, force: true })),
  });
});

describeArtifactStoreContract('the S3', async () => {
  const server = await startS3Server();
  const store = server.store('deployment-a/artifacts');
  return {
    store,
    openReads: () => Promise.resolve(server.activeRequests()),
    breakBackend: () => server.stop(),
    close: async () => {
      store.close();
      await server.close();
    },
  };
});
