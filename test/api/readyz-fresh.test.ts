// /readyz is right from the first call: a freshly started API process (the built one, as production
// starts it) is asked once, right after it logs that it listens, and must say ready.
import { freePort, spawnService } from '../support/processes';

async function waitForOutput(output: () => string, text: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (output().includes(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never saw "${text}" in:\n${output()}`);
}

it('the first /readyz of a fresh process answers 200 ready', async () => {
  const port = await freePort();
  const { child, output, exited } = spawnService('api', { PORT: String(port), LOG_LEVEL: 'info' });
  try {
    await waitForOutput(output, '"message":"listening"');
    const first = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect({ status: first.status, body: (await first.json()) as unknown }).toEqual({
      status: 200,
      body: { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } },
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
});
