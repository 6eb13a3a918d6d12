/**
 * `pnpm fixture`: the fixture shop the tests and `pnpm demo` use (test/fixtures/site.ts), served on
 * 127.0.0.1 until Ctrl-C, so the README's Quickstart has a target without the internet.
 * `FIXTURE_PORT` picks the port (default 4010, the port examples/shop.yaml points at; 0: any free
 * one); its second origin listens on the next port (4011), or on any free one with `FIXTURE_PORT=0`.
 */
import { readInt } from '@testrun/core/env';
import { startFixtureSite } from '../test/fixtures/site';

const DEFAULT_PORT = 4010;

async function main(): Promise<void> {
  const port = readInt(process.env, 'FIXTURE_PORT', DEFAULT_PORT, { max: 65_534 });
  const site = await startFixtureSite({ port, thirdPartyPort: port === 0 ? 0 : port + 1 });
  const ports = [new URL(site.url).port, new URL(site.thirdParty.url).port].map(Number);
  // Its two ports only: a rule for all of 127.0.0.1 would open every other service listening there too.
  const allow =
    ports[1] === (ports[0] ?? 0) + 1
      ? `127.0.0.1:${ports[0]}-${ports[1]}`
      : ports.map((p) => `127.0.0.1:${p}`).join(',');
  process.stdout.write(
    `Fixture shop: ${site.url}  (second origin ${site.thirdParty.url}; pages: test/fixtures/README.md)\n` +
      `Runs reach it only with its ports allowed: TARGET_ALLOW=${allow} for the API, the worker and the admin command. Ctrl-C stops it.\n`,
  );
  const stop = () => void site.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`fixture failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
