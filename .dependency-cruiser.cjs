// @ts-check
// The import boundaries of apps/ and packages/, checked by `pnpm lint` (docs/ARCHITECTURE.md, "Import
// boundaries"). Paths are relative to the repository root; workspace packages (`@testrun/*`) resolve
// to their sources through the `@testrun/source` export condition, so a package import is an edge
// to the package's folder like any relative one.

/**
 * docs/ARCHITECTURE.md, "The worker's layout": apps/worker/src's folders (and top-level modules) by
 * floor, lowest first. A room imports only rooms of the floors below its own: never one above, and
 * never another room of its floor.
 */
const WORKER_FLOORS = [
  ['support'],
  ['sandbox', 'browser'],
  ['network'],
  ['run'],
  ['executors'],
  ['housekeeping', 'webhooks'],
  ['config'],
  ['service'],
  ['index', 'main'],
];

const workerRoom = (/** @type {string} */ room) => `^apps/worker/src/${room}(/|\\.ts$)`;

/** One rule a room of the worker: what it may not import (see {@link WORKER_FLOORS}). */
const workerFloorRules = WORKER_FLOORS.flatMap((rooms, floor) =>
  rooms.map((room) => ({
    name: `worker-floor-${room}`,
    comment: `A module of the worker's ${room} imports a room of its own floor or of a floor above it (docs/ARCHITECTURE.md, "The worker's layout").`,
    severity: /** @type {const} */ ('error'),
    from: { path: workerRoom(room), pathNot: '\\.test\\.ts$' },
    to: {
      path: [...rooms.filter((other) => other !== room), ...WORKER_FLOORS.slice(floor + 1).flat()].map(workerRoom),
    },
  })),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...workerFloorRules,
    {
      // docs/ARCHITECTURE.md, "The worker's layout": a kind of test is one folder under executors/.
      name: 'worker-executors-own-folder',
      comment:
        "A worker executor's module imports another executor's folder or the registry (executors/index.ts): each kind of test is a folder of its own.",
      severity: 'error',
      from: { path: '^apps/worker/src/executors/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^apps/worker/src/executors/', pathNot: '^apps/worker/src/executors/$1/' },
    },
    {
      // Type-only imports count too: a cycle of types still ties the modules into one unit that
      // cannot be understood, tested or moved apart, and breaking it costs no more than a runtime one.
      name: 'no-cycles',
      comment: 'A module of apps/ or packages/ reaches itself again through its imports.',
      severity: 'error',
      from: { path: '^(apps|packages)/' },
      to: { circular: true },
    },
    {
      name: 'apps-not-each-other',
      comment: 'An app imports another app: share the code through a package instead.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'contracts-imports-no-workspace-package',
      comment: 'packages/contracts is the bottom layer: it imports no other package or app of ours.',
      severity: 'error',
      from: { path: '^packages/contracts/' },
      to: { path: '^(apps|packages|test)/', pathNot: '^packages/contracts/' },
    },
    {
      name: 'packages-not-apps-or-test',
      comment: 'A package imports an app or the root test/ folder: packages sit below both.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^(apps|test)/' },
    },
    {
      name: 'admin-only-for-operators',
      comment:
        'packages/admin (the operator CLI and its operations) is imported by something other than itself: the apps, the published CLI and the other packages never ship it.',
      severity: 'error',
      from: { path: '^(apps|packages)/', pathNot: '^packages/admin/' },
      to: { path: '^packages/admin/' },
    },
    {
      // Sockets, processes, a browser or a database make a test an integration test: it goes under test/.
      name: 'colocated-tests-are-unit-tests',
      comment:
        'A test beside its source opens sockets, processes, a browser or a database: integration tests live under test/.',
      severity: 'error',
      from: { path: '^(apps|packages)/[^/]+/src/.+\\.test\\.ts$' },
      to: {
        path: '^(node:)?(net|http|https|http2|dgram|child_process)$|(^|/)node_modules/(playwright|playwright-core|ioredis|pg|@prisma/client|bullmq)/',
      },
    },
    {
      name: 'colocated-tests-not-root-test',
      comment: 'A test beside its source imports a root test/ helper: those start the whole system.',
      severity: 'error',
      from: { path: '^(apps|packages)/[^/]+/src/.+\\.test\\.ts$' },
      to: { path: '^test/' },
    },
    {
      // docs/ARCHITECTURE.md, "The worker's layout": inside/ runs in the sandbox under the team's Node,
      // where only Node's builtins, the mounted Playwright packages and inside/ itself are there.
      name: 'worker-inside-sandbox-only',
      comment:
        'A module of executors/playwright/inside/ (run in the sandbox) imports something other than a node: builtin, Playwright or inside/ itself: it would not load there.',
      severity: 'error',
      from: { path: '^apps/worker/src/executors/playwright/inside/', pathNot: '\\.test\\.ts$' },
      to: {
        dependencyTypesNot: ['core'],
        pathNot: [
          '^apps/worker/src/executors/playwright/inside/',
          '(^|/)node_modules/(playwright|playwright-core|@playwright/test)/',
          // A Playwright module the resolver does not find (a type-only path its exports map keeps to `types`).
          '^(playwright|playwright-core|@playwright/test)(/|$)',
        ],
      },
    },
    {
      // docs/ARCHITECTURE.md, "The worker's layout": the Playwright executor's rooms. The executor room
      // (executors/playwright/'s own files and batch/) is on top; the runner adapter (runner/) and the
      // caches (caches/) below it know nothing of runs' attempts; inside/ is at the bottom.
      name: 'worker-playwright-executor-on-top',
      comment:
        "A module of executors/playwright/runner/ or caches/ imports the executor room (executors/playwright/'s own files, batch/) or the executor interface: they sit below the executor.",
      severity: 'error',
      from: { path: '^apps/worker/src/executors/playwright/(runner|caches)/', pathNot: '\\.test\\.ts$' },
      to: {
        path: ['^apps/worker/src/executors/(playwright/)?[^/]+\\.ts$', '^apps/worker/src/executors/playwright/batch/'],
      },
    },
    {
      name: 'worker-playwright-caches-below-runner',
      comment:
        'A module of executors/playwright/caches/ imports the runner adapter (runner/): the caches sit below the runner that seeds and keeps them.',
      severity: 'error',
      from: { path: '^apps/worker/src/executors/playwright/caches/', pathNot: '\\.test\\.ts$' },
      to: { path: '^apps/worker/src/executors/playwright/runner/' },
    },
    {
      // Without this an import that fails to resolve would slip past every rule above.
      name: 'workspace-imports-resolve',
      comment: 'An import of a workspace package does not resolve to a file.',
      severity: 'error',
      from: {},
      to: { path: '^@testrun/', couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // Build output, bundles and the generated Prisma client are not ours to arrange.
    exclude: { path: ['(^|/)dist/', '/src/generated/'] },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@testrun/source', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.json'],
      mainFields: ['main'],
    },
    reporterOptions: {
      dot: { collapsePattern: '^(apps|packages)/[^/]+|node_modules/(@[^/]+/)?[^/]+' },
      archi: { collapsePattern: '^(apps|packages)/[^/]+|node_modules/(@[^/]+/)?[^/]+' },
    },
  },
};
