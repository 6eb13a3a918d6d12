/**
 * `pnpm fixture`: the fixture shop the tests and `pnpm demo` use (test/fixtures/site.ts), served on
 * 127.0.0.1 until Ctrl-C, so the README's Quickstart has a target without the internet.
 * `FIXTURE_PORT` picks the port (default 4010, the port examples/shop.yaml points at; 0: any free one).
 */
import { readInt } from '@testrun/core/env';
import { startFixtureSite } from '../test/fixtures/site';

const DEFAULT_PORT = 4010;

async function main(): Promise<void> {
  const port = readInt(process.env, 'FIXTURE_PORT', DEFAULT_PORT, { max: 65_535 });
  const site = await startFixtureSite({ port });
  process.stdout.write(
    `Fixture shop: ${site.url}  (second origin ${site.thirdParty.url}; pages: test/fixtures/README.md)\n` +
      'Runs reach it only with loopback allowed: TARGET_ALLOW=127.0.0.1 for the API and the worker. Ctrl-C stops it.\n',
  );
  const stop = () => void site.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`fixture failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
