import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CgroupDetection } from './cgroups';
import { detectV1 } from './cgroups-v1';
import { detectV2, KERNEL_HOST, type CgroupV2Host } from './cgroups-v2-detect';

/**
 * The cgroup driver this machine allows, or why there is none. cgroup v2 when `root` is a cgroup2
 * mount (it has cgroup.controllers): memory, pids and cpu available and the worker's own cgroup
 * delegated to it (cgroups-v2-detect.ts). Otherwise cgroup v1: memory, pids and cpu mounted as
 * hierarchies under `root` and a group this process can create and remove.
 */
export async function detectCgroups(
  root = '/sys/fs/cgroup',
  host: CgroupV2Host = KERNEL_HOST,
): Promise<CgroupDetection> {
  if (existsSync(path.join(root, 'cgroup.controllers'))) return detectV2(root, host);
  const v1 = await detectV1(root);
  if ('reason' in v1 && existsSync(path.join(root, 'unified')))
    return {
      reason: `${v1.reason}, and ${root} is not a cgroup2 mount (its cgroup v2 hierarchy is only ${root}/unified, beside v1, without those controllers): boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2, or mount the v1 controllers`,
    };
  return v1;
}
