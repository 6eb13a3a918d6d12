// Preloaded into a worker process by test/e2e/fault-guard.test.ts (node --require), never in
// production: it makes a run's `goto` raise a fault that no caller can catch, the way Playwright's
// connection throws outside its callers. The worker's own handlers all catch their errors, so
// nothing realistic is left to raise one on purpose.
//
// - a URL with `fault=run` throws from a timer the run's own call scheduled (it belongs to the run);
// - a URL with `fault=process` throws from a timer scheduled outside every run (it belongs to none).
'use strict';
const path = require('node:path');
const { AsyncResource } = require('node:async_hooks');

// Made at load time, before any run: callbacks run in its scope belong to no run.
const outsideEveryRun = new AsyncResource('inject-faults');
const { chromium } = require(
  require.resolve('playwright', { paths: [path.join(__dirname, '..', '..', 'apps', 'worker')] }),
);

function throwLater(message) {
  setTimeout(() => {
    throw new Error(message);
  }, 0);
}

function patchPage(page) {
  const goto = page.goto.bind(page);
  page.goto = (url, options) => {
    if (url.includes('fault=run')) throwLater('injected fault inside a run');
    if (url.includes('fault=process'))
      outsideEveryRun.runInAsyncScope(() => throwLater('injected fault outside every run'));
    return goto(url, options);
  };
  return page;
}

const launch = chromium.launch.bind(chromium);
chromium.launch = async (...args) => {
  const browser = await launch(...args);
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...contextArgs) => {
    const context = await newContext(...contextArgs);
    const newPage = context.newPage.bind(context);
    context.newPage = async () => patchPage(await newPage());
    return context;
  };
  return browser;
};
