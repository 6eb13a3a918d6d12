// Generates the Prisma client. The Prisma CLI insists on finding its schema-engine binary before
// `generate`, which does not use it; where that binary cannot be downloaded, any executable stands in.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY && existsSync('/bin/true')) env.PRISMA_SCHEMA_ENGINE_BINARY = '/bin/true';
const result = spawnSync('prisma', ['generate'], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env,
  shell: false,
  encoding: 'utf8',
});
if (result.status !== 0) {
  process.stderr.write(result.stdout ?? '');
  process.stderr.write(result.stderr ?? '');
  console.error('prisma generate failed');
  process.exit(result.status ?? 1);
}
