import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import { VisualStore } from './store-visual';
import type { SnapshotFinding } from './runner/types';

/** A store that only counts what is put in it; a database no call may reach (nothing is kept). */
function parts() {
  const put: string[] = [];
  const store = { put: (key: string) => Promise.resolve(void put.push(key)) } as unknown as ArtifactStore;
  const db = new Proxy(
    {},
    {
      get: () => {
        throw new Error('the database was reached');
      },
    },
  ) as Db;
  return { put, visual: new VisualStore(db, store) };
}

describe('VisualStore.record', () => {
  const outer = mkdtempSync(path.join(tmpdir(), 'visual-'));
  const scratch = path.join(outer, 'scratch');
  const bundle = path.join(scratch, 'bundle');
  mkdirSync(path.join(bundle, 'snaps'), { recursive: true });
  writeFileSync(path.join(outer, 'host-secret.png'), 'host');
  symlinkSync('/etc/shadow', path.join(bundle, 'snaps', 'shadow-linux.png'));
  symlinkSync(path.join(outer, 'host-secret.png'), path.join(bundle, 'snaps', 'host-linux.png'));
  writeFileSync(path.join(bundle, 'snaps', 'big-linux.png'), Buffer.alloc(2048));
  const finding = (name: string, file: string): SnapshotFinding => ({
    kind: 'new',
    name,
    path: path.relative(bundle, file),
    file,
    contentType: 'image/png',
  });

  it("keeps no image the sandbox linked to the host's files, nor one over the limit, and says why", async () => {
    const { put, visual } = parts();
    const notes = await visual.record(
      { id: 'run_1', workspaceId: 'ws_1' },
      [
        finding('shadow.png', path.join(bundle, 'snaps', 'shadow-linux.png')),
        finding('host.png', path.join(bundle, 'snaps', 'host-linux.png')),
        finding('big.png', path.join(bundle, 'snaps', 'big-linux.png')),
        finding('outside.png', '/etc/passwd'),
      ],
      scratch,
      1024,
    );
    expect(put).toEqual([]);
    expect(notes).toHaveLength(4);
    expect(notes[0]).toMatch(/^the snapshot "shadow.png" was not kept: its file /);
    expect(notes[2]).toMatch(/over 1024 bytes/);
  });
});

describe('VisualStore.baselinesFor', () => {
  it("fetches the bundle's baselines only: a step test's (a path outside any bundle) is never read or placed", async () => {
    const row = (p: string) => ({ path: p, sha256: 'a'.repeat(64), storageKey: `baselines/ws/${p}`, sizeBytes: 3 });
    const rows = [row('/steps/smoke/home/page.png'), row('e2e/home.spec.ts-snapshots/home-chromium-linux.png')];
    const db = { $queryRaw: () => Promise.resolve(rows) } as unknown as Db;
    const read: string[] = [];
    const store = {
      get: (key: string) => Promise.resolve((read.push(key), Buffer.from('png'))),
    } as unknown as ArtifactStore;
    const placed = await new VisualStore(db, store).baselinesFor('run_1');
    expect(placed.map((p) => p.path)).toEqual(['e2e/home.spec.ts-snapshots/home-chromium-linux.png']);
    expect(read).toEqual(['baselines/ws/e2e/home.spec.ts-snapshots/home-chromium-linux.png']);
  });
});
