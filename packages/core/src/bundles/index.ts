// Playwright bundles in the artifact store (docs/API.md, "Bundles"): stored by the API, read by the
// deployment's check and by the worker. Content-addressed per workspace. Both read a bundle with
// walk.ts's rules and caps, the API as it receives it, the worker as it extracts it (extract.ts).
export * from './errors';
export * from './extract';
export * from './store';
export { providedPackageIn, type BundleEntry } from './walk';
