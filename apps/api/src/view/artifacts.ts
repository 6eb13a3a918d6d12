import { pipeline } from 'node:stream/promises';
import type { Request, Response } from 'express';
import parseRange from 'range-parser';
import type { ArtifactStore, ByteRange } from '@testrun/core/artifact-store';
import type { Logger } from '@testrun/core/logger';
import type { ServedArtifact } from '@testrun/core/runs';
import { attachmentClass, mediaTypeOf } from '@testrun/contracts';

/** Artifacts are data, never documents: a file that claims to be HTML still cannot run anything. */
const ARTIFACT_POLICY = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** Types an artifact is served as; anything else is a download of bytes. */
const SERVABLE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'video/webm', 'video/mp4', 'application/zip']);

/**
 * How a file is served: its type and whether a browser may show it. What a test attached on purpose
 * keeps the type the test gave it, which is never trusted: a raster image is served as its type,
 * text as plain text, anything else (SVG, HTML, PDF, …) as bytes to download.
 */
function servedAs(artifact: ServedArtifact): { type: string; inline: boolean } {
  if (artifact.kind === 'attachment') {
    switch (attachmentClass(artifact.contentType)) {
      case 'image':
        return { type: mediaTypeOf(artifact.contentType), inline: true };
      case 'text':
        return { type: 'text/plain; charset=utf-8', inline: true };
      case 'binary':
        return { type: 'application/octet-stream', inline: false };
    }
  }
  const servable = SERVABLE_TYPES.has(artifact.contentType);
  return { type: servable ? artifact.contentType : 'application/octet-stream', inline: servable };
}

function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'artifact';
}

/**
 * The one byte range to send, from `Range` (parsed by `range-parser`): null sends the whole file, as
 * for no `Range`, a malformed one, a unit other than bytes, an `If-Range` that names another
 * version, or several ranges (a valid answer to them that spares a multipart body; the trace
 * viewer asks for one range at a time).
 */
function requestedRange(req: Request, size: number, etag: string): ByteRange | 'unsatisfiable' | null {
  const header = req.headers.range;
  if (header === undefined) return null;
  const ifRange = req.headers['if-range'];
  if (ifRange !== undefined && ifRange !== etag) return null;
  const ranges = parseRange(size, header, { combine: true });
  if (ranges === -1) return 'unsatisfiable';
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  const [range] = ranges;
  return range ? { start: range.start, end: range.end } : null;
}

/**
 * True when `If-None-Match` names this ETag (or `*`), compared weakly as RFC 9110 asks. Not
 * express's req.fresh: that answers 200 to any request with `Cache-Control: no-cache`, which fetch()
 * adds to every conditional request it is given.
 */
export function matchesETag(req: Request, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}

/** How the client's side of a stream ended before the whole body was sent: the reader went away. */
function isClientGone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * Sends one artifact: caching headers and ETag (304 on `If-None-Match`), the one range asked for
 * (206, or 416 with `Content-Range: bytes *\/size`) or the whole file, streamed from the store. A
 * client that goes away mid-stream ends the read (the file is closed). False when the row's file is
 * not in the store.
 */
export async function sendArtifact(
  req: Request,
  res: Response,
  deps: { store: ArtifactStore; logger: Logger },
  artifact: ServedArtifact,
): Promise<boolean> {
  const etag = `"${artifact.id}"`;
  const size = artifact.sizeBytes;
  const served = servedAs(artifact);
  // Artifacts never change once written: cache them for good, but only in the browser (the URL is a capability).
  res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
  res.setHeader('ETag', etag);
  res.setHeader('Content-Security-Policy', ARTIFACT_POLICY);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Type', served.type);
  res.setHeader(
    'Content-Disposition',
    `${served.inline ? 'inline' : 'attachment'}; filename="${safeFileName(artifact.name)}"`,
  );
  if (matchesETag(req, etag)) {
    res.status(304).end();
    return true;
  }
  const range = requestedRange(req, size, etag);
  if (range === 'unsatisfiable') {
    res.status(416).setHeader('Content-Range', `bytes */${size}`).end();
    return true;
  }

  const opened = await deps.store.open(artifact.storageKey, range ?? undefined);
  if (!opened) return false;
  if (opened.size !== size) {
    opened.stream.destroy();
    throw new Error(`artifact ${artifact.id} has ${opened.size} bytes in the store but ${size} in its row`);
  }
  if (range) res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
  res.setHeader('Content-Length', String(range ? range.end - range.start + 1 : size));
  if (req.method === 'HEAD') {
    opened.stream.destroy();
    res.end();
    return true;
  }
  try {
    // pipeline destroys the file stream whichever side fails, so no file handle outlives the response.
    await pipeline(opened.stream, res);
  } catch (error) {
    if (!isClientGone(error))
      deps.logger.error('artifact stream failed', {
        artifactId: artifact.id,
        err: String(error),
      });
  }
  return true;
}
