import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * `apps/api/assets`: beside `src/`, so this path holds from `src/view/*.ts` and from the built
 * `dist/view/*.js` alike (both sit two levels below the package).
 */
const ASSETS_DIR = path.resolve(__dirname, '../../assets');

/** One file the pages load, under a name that carries its content hash so it can be cached forever. */
export type ViewAsset = {
  /** `view.<first 12 hex digits of its SHA-256>.css`. */
  name: string;
  body: Buffer;
  etag: string;
  type: string;
};

function load(file: string, type: string): ViewAsset {
  const body = readFileSync(path.join(ASSETS_DIR, file));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const { name, ext } = path.parse(file);
  return { name: `${name}.${hash}${ext}`, body, etag: `"${hash}"`, type };
}

/**
 * The view's stylesheet and script, read and hashed once when the API starts (a missing file stops
 * it there). Files of their own so the Content-Security-Policy can forbid inline code.
 */
export const ASSETS = {
  css: load('view.css', 'text/css; charset=utf-8'),
  js: load('view.js', 'text/javascript; charset=utf-8'),
} as const;

const BY_NAME = new Map<string, ViewAsset>(Object.values(ASSETS).map((asset) => [asset.name, asset]));

/** The asset served under this hashed name; undefined for any other name, an old hash included. */
export function findAsset(name: string): ViewAsset | undefined {
  return BY_NAME.get(name);
}
