import { Type, type Static } from '@sinclair/typebox';

// What a file a Playwright test attached (testInfo.attach) is, by the content type the test gave it:
// the worker masks text, the view shows raster images inline and text as text, and serves every
// other type as a download. The type comes from the sandbox: it only ever narrows what is done.

/** The raster image types shown inline (never SVG: a document, which can hold script). */
const RASTER_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Application types that are text. */
const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/x-ndjson',
  'application/x-yaml',
  'application/yaml',
  'application/csv',
  'application/x-sh',
  'application/sql',
  'application/graphql',
]);

/** How an attachment is kept and shown: an image drawn inline, text read (and masked), or bytes. */
export type AttachmentClass = 'image' | 'text' | 'binary';

/** A content type's media type, lower case, without its parameters (`Text/Plain; charset=x` → `text/plain`). */
export function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export function attachmentClass(contentType: string): AttachmentClass {
  const type = mediaTypeOf(contentType);
  if (RASTER_TYPES.has(type)) return 'image';
  if (type.startsWith('text/') || TEXT_APPLICATION_TYPES.has(type)) return 'text';
  if (/^application\/[a-z0-9.+-]+\+(json|xml)$/.test(type)) return 'text';
  return 'binary';
}

/** A file a Playwright test attached on purpose (testInfo.attach), kept with the run. */
export const RunAttachment = Type.Object(
  {
    id: Type.String({
      description: "The artifact's id (`art_…`): the run's view serves it at `<view link>/artifacts/<id>`.",
    }),
    name: Type.String({ description: 'The name the test gave it (masked).' }),
    content_type: Type.String({ description: 'The media type the test gave it (never trusted for rendering).' }),
    size_bytes: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type RunAttachment = Static<typeof RunAttachment>;

/** A run's `attachments`: optional, absent when none was kept. */
export const RunAttachments = Type.Optional(
  Type.Array(RunAttachment, {
    description:
      "What a Playwright test attached on purpose (testInfo.attach) in the run's last attempt, oldest first; absent when none was kept, and once retention deleted the run's artifacts.",
  }),
);
