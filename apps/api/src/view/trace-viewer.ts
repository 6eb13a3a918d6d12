import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';

/**
 * Where playwright-core ships the trace viewer's static build. It is served from there, never copied,
 * so it always matches the Playwright version that recorded the traces.
 */
export function traceViewerDir(): string | null {
  try {
    const dir = path.join(path.dirname(require.resolve('playwright-core/package.json')), 'lib', 'vite', 'traceViewer');
    return existsSync(path.join(dir, 'index.html')) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * The trace viewer's own policy: it is a single-page app that registers a service worker, renders
 * DOM snapshots in same-origin frames and styles them inline, so it needs more than the view's
 * pages, but still nothing from another origin. Its one inline script (a file:// warning) is
 * allowed by hash.
 */
function traceViewerPolicy(dir: string): string {
  const index = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const hashes = [...index.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (m) =>
      `'sha256-${createHash('sha256')
        .update(m[1] ?? '')
        .digest('base64')}'`,
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "frame-src 'self' data: blob:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join('; ');
}

/** Serves the trace viewer under `<mount>/trace-viewer/`; it opens `index.html?trace=<url of a trace.zip>`. */
export function createTraceViewerRouter(dir: string): Router {
  const policy = traceViewerPolicy(dir);
  const router = express.Router();
  router.use(
    express.static(dir, {
      index: 'index.html',
      fallthrough: true,
      redirect: false,
      setHeaders(res, file) {
        res.setHeader('Content-Security-Policy', policy);
        // Vite's hashed file names never change content; the entry page and service worker must revalidate.
        const name = path.basename(file);
        const fingerprinted =
          /\.[A-Za-z0-9_-]{8}\.(js|css)$/.test(name) ||
          /-[A-Za-z0-9_-]{8}\.js$/.test(name) ||
          file.includes(`${path.sep}assets${path.sep}`);
        res.setHeader(
          'Cache-Control',
          fingerprinted && name !== 'sw.bundle.js' ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
        if (name === 'sw.bundle.js') res.setHeader('Service-Worker-Allowed', res.req.baseUrl + '/');
      },
    }),
  );
  return router;
}
