// Playwright bundles in the artifact store (docs/API.md, "Bundles"): stored by the API, read by the
// deployment's check and by the worker. Content-addressed per workspace.
export * from './store';
