/*
 * Runs INSIDE the sandbox, as the team's `@playwright/test` (a shim package mounted at
 * /node_modules/@playwright/test re-exports this module): everything of `playwright/test`, with
 * `test` extended by one automatic fixture that sends the run's headers to the target's origin,
 * and to no other, from every browser context and API request context the test creates.
 * It imports nothing but Node, Playwright and its neighbours: the worker's modules are not in the sandbox.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test as base, type APIRequestContext, type BrowserContext, type Page, type Route } from 'playwright/test';
import { INTERRUPT_FILE, interruptLine } from './protocol';

export * from 'playwright/test';

/** Written by the worker next to the run's options (never in the environment or a command line). */
const HEADERS_FILE = `${process.env.TESTRUN_STATE_DIR ?? '/work/.testrun'}/target-headers.json`;

interface TargetHeaders {
  origin: string;
  headers: Record<string, string>;
}

function readTargetHeaders(): TargetHeaders | null {
  try {
    const parsed = JSON.parse(readFileSync(HEADERS_FILE, 'utf8')) as TargetHeaders;
    return parsed.origin && Object.keys(parsed.headers).length > 0 ? parsed : null;
  } catch {
    return null;
  }
}

function originOf(url: string, base?: string): string | null {
  try {
    return new URL(url, base).origin;
  } catch {
    return null;
  }
}

/** Runs `call` as the service's own: not one of the test's steps (Playwright's internal API zone). */
function internal<T>(owner: object, call: () => Promise<T>): Promise<T> {
  const wrap = (owner as { _wrapApiCall?: (f: () => Promise<T>, o: { internal: boolean }) => Promise<T> })._wrapApiCall;
  return wrap ? wrap.call(owner, call, { internal: true }) : call();
}

/**
 * The page's requests for the target: fetched without following redirects and given to the page,
 * which follows any redirect itself (another origin's hop is not routed here, so it goes without
 * them): Chromium would otherwise keep overridden headers on the redirects it follows.
 */
async function routeContext(context: BrowserContext, target: TargetHeaders): Promise<void> {
  const handle = async (route: Route): Promise<void> => {
    const headers = { ...route.request().headers(), ...target.headers };
    try {
      const response = await internal(route, () => route.fetch({ headers, maxRedirects: 0 }));
      await route.fulfill({ response });
    } catch {
      await route.abort('connectionfailed').catch(() => undefined);
    }
  };
  await context.route((url) => url.origin === target.origin, handle);
}

type InnerFetch = (options: Record<string, unknown>) => Promise<Awaited<ReturnType<APIRequestContext['fetch']>>>;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * An API request context's requests: the headers are added to a request for the target's origin,
 * and redirects are followed here, hop by hop, so a hop to another origin goes without them.
 */
function wrapRequestContext(request: APIRequestContext, target: TargetHeaders, baseURL?: string): void {
  const holder = request as unknown as { _innerFetch: InnerFetch };
  const inner = holder._innerFetch.bind(request);
  holder._innerFetch = async (options) => {
    if (typeof options.url !== 'string') return inner(options);
    let url = options.url;
    let current = { ...options };
    let left = typeof options.maxRedirects === 'number' ? options.maxRedirects : 20;
    for (;;) {
      const toTarget = originOf(url, baseURL) === target.origin;
      const headers = toTarget
        ? { ...(current.headers as Record<string, string> | undefined), ...target.headers }
        : (current.headers as Record<string, string> | undefined);
      const response = await inner({ ...current, url, headers, maxRedirects: 0 });
      const location = response.headers().location;
      if (!REDIRECTS.has(response.status()) || location === undefined || left <= 0) return response;
      left -= 1;
      url = new URL(location, new URL(url, baseURL)).toString();
      if (response.status() === 303 || (response.status() <= 302 && current.method === 'POST'))
        current = { ...current, method: 'GET', data: undefined, form: undefined, multipart: undefined };
    }
  };
}

interface ClientInstrumentation {
  addListener(listener: object): void;
  removeListener(listener: object): void;
}

/** Where the worker names tests to stop (executors/playwright/runner/interrupt.ts), when it can. */
const CONTROL_DIR = process.env.TESTRUN_CONTROL_DIR;
const BUNDLE_DIR = process.env.TESTRUN_BUNDLE_DIR ?? '/work/bundle';

/** Whether the worker named this test (its {@link interruptLine}) to stop. */
function interrupted(line: string): boolean {
  try {
    return readFileSync(`${CONTROL_DIR}/${INTERRUPT_FILE}`, 'utf8').split('\n').includes(line);
  } catch {
    return false;
  }
}

/**
 * The annotation that names, for a test that did not pass, the URL each of its pages was left on
 * (at most {@link MAX_PAGE_URLS}): the worker tells by it a test that failed on a page the network
 * policy refused, which showed the proxy's refusal instead of the target (runner/outcome.ts, failedOnRefusal).
 */
const PAGE_URL = 'testrun:page-url';
const MAX_PAGE_URLS = 10;

export const test = base.extend<{
  _testrunTargetHeaders: undefined;
  _testrunInterrupt: undefined;
  _testrunPageUrls: undefined;
}>({
  _testrunPageUrls: [
    async ({ playwright }, use, testInfo) => {
      const instrumentation = (playwright as unknown as { _instrumentation: ClientInstrumentation })._instrumentation;
      // The pages are kept as they open: a context's pages() is empty once it is closed, before this ends.
      const pages = new Set<Page>();
      const listener = {
        runAfterCreateBrowserContext: (context: BrowserContext) => {
          context.on('page', (page) => pages.add(page));
          return Promise.resolve();
        },
      };
      instrumentation.addListener(listener);
      await use(undefined);
      instrumentation.removeListener(listener);
      if (testInfo.status === testInfo.expectedStatus) return;
      const urls = new Set([...pages].map((page) => page.url()));
      for (const url of [...urls].slice(0, MAX_PAGE_URLS))
        testInfo.annotations.push({ type: PAGE_URL, description: url });
    },
    { auto: true, box: true },
  ],
  // While the test runs, a Playwright worker whose test the worker named ends itself at once: its
  // browser goes with it, and Playwright's runner goes on with the next tests in a new worker.
  _testrunInterrupt: [
    async ({ _testrunTargetHeaders: _headers }, use, testInfo) => {
      if (CONTROL_DIR === undefined) return use(undefined);
      const file = path.relative(BUNDLE_DIR, testInfo.file).split(path.sep).join('/');
      const line = interruptLine({ file, project: testInfo.project.name, titlePath: testInfo.titlePath.slice(1) });
      if (interrupted(line)) process.kill(process.pid, 'SIGKILL');
      const poll = setInterval(() => {
        if (interrupted(line)) process.kill(process.pid, 'SIGKILL');
      }, 200);
      try {
        await use(undefined);
      } finally {
        clearInterval(poll);
      }
    },
    { auto: true, box: true },
  ],
  _testrunTargetHeaders: [
    async ({ playwright, baseURL }, use) => {
      const target = readTargetHeaders();
      if (!target) return use(undefined);
      const instrumentation = (playwright as unknown as { _instrumentation: ClientInstrumentation })._instrumentation;
      const listener = {
        runAfterCreateBrowserContext: (context: BrowserContext) => routeContext(context, target),
        runAfterCreateRequestContext: (request: APIRequestContext) => {
          wrapRequestContext(request, target, baseURL);
          return Promise.resolve();
        },
      };
      instrumentation.addListener(listener);
      await use(undefined);
      instrumentation.removeListener(listener);
    },
    { auto: true, box: true },
  ],
});
