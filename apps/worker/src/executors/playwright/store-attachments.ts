import path from 'node:path';
import { attachmentClass, mediaTypeOf, type ArtifactKind } from '@testrun/contracts';
import type { ArtifactWriter } from '../../run/artifact-writer';
import type { RunLimits } from '../../run/run-limits';
import type { SecretMask } from '../../run/secret-mask';
import { readScratchFile, ScratchPathError } from '../../sandbox';
import type { PlaywrightAttachment } from './runner/types';

// A test's attachments as the run keeps them (docs/PLAYWRIGHT.md, "Attachments"): Playwright's own
// screenshots, video and trace (its options, which the run's evidence policy sets) as evidence, each
// up to the recording limit; what the test attached on purpose (testInfo.attach, by path or by body,
// any content type) as `attachment` artifacts under their names, up to a count and a total of bytes
// per run, text masked. Everything here came from the sandbox: names, types, sizes and paths.

/** Where kept files go: the run's writer, or a setup test's record (record-setup.ts). */
export type FileSink = Pick<ArtifactWriter, 'recordRunFile'>;

/** What a run may still keep of the attachments its tests make on purpose: files and bytes left. */
export interface AttachmentBudget {
  files: number;
  bytes: number;
  /** The run's limit of bytes, for its notes. */
  maxBytes: number;
  /** Attachments left out for the count, said in one note at the end. */
  overCount: number;
}

export function attachmentBudget(limits: Pick<RunLimits, 'maxAttachments' | 'maxRecordingBytes'>): AttachmentBudget {
  return {
    files: limits.maxAttachments,
    bytes: limits.maxRecordingBytes,
    maxBytes: limits.maxRecordingBytes,
    overCount: 0,
  };
}

/** Where attachments are read from and what they are kept within. */
export interface AttachmentSource {
  scratchDir: string;
  mask: SecretMask;
  /** Largest file of Playwright's own (a trace, a video, a screenshot) kept. */
  maxFileBytes: number;
  budget: AttachmentBudget;
}

/** The longest attachment name kept, in characters. */
const MAX_NAME = 200;
/** A media type as RFC 9110 spells one. */
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]{1,64}\/[a-z0-9!#$&^_.+-]{1,128}$/;

/** How Playwright's own attachment is kept: its screenshots, trace and video; anything else of its own not at all. */
function automaticKind(name: string): ArtifactKind | null {
  if (name === 'trace' || name === 'video' || name === 'screenshot') return name;
  return null;
}

/** The name shown and downloaded: no control characters, bounded, masked. */
function keptName(name: string, mask: SecretMask): string {
  const clean = mask.text(name.replace(/[\p{Cc}\p{Cf}]/gu, ' ').trim()).slice(0, MAX_NAME);
  return clean || 'attachment';
}

/** The media type kept: the test's when it is one, else bytes. Never trusted for rendering (view/artifacts.ts). */
function keptType(contentType: string): string {
  const type = mediaTypeOf(contentType.slice(0, 256));
  return MEDIA_TYPE.test(type) ? type : 'application/octet-stream';
}

/** Reads a file the test named, through no link and from the scratch directory only; a refusal becomes a note. */
async function readAttachment(
  at: AttachmentSource,
  file: string,
  maxBytes: number,
  refused: (error: ScratchPathError) => string,
  notes: string[],
): Promise<Buffer | null> {
  try {
    return await readScratchFile(at.scratchDir, path.relative(at.scratchDir, file), maxBytes);
  } catch (error) {
    if (error instanceof ScratchPathError) notes.push(refused(error));
    return null;
  }
}

const isOverSize = (error: ScratchPathError) => / is over \d+ bytes/.test(error.message);

/** Stores one of Playwright's own attachments (see automaticKind), as before there were others. */
async function storeAutomatic(writer: FileSink, a: PlaywrightAttachment, at: AttachmentSource, notes: string[]) {
  const kind = automaticKind(a.name);
  if (!kind || a.path === undefined) return;
  const body = await readAttachment(
    at,
    a.path,
    at.maxFileBytes,
    (error) =>
      isOverSize(error)
        ? `the ${a.name} is over the ${at.maxFileBytes}-byte limit and was not kept`
        : `the ${a.name} was not kept: its file ${error.reason}`,
    notes,
  );
  if (body) writer.recordRunFile(kind, path.basename(a.path), a.contentType, body);
}

/** Stores one attachment the test made on purpose, within the run's budget; text masked. */
async function storeOwn(writer: FileSink, a: PlaywrightAttachment, at: AttachmentSource, notes: string[]) {
  const { budget } = at;
  if (budget.files <= 0) {
    budget.overCount += 1;
    return;
  }
  const name = keptName(a.name, at.mask);
  const label = `the attachment "${name.slice(0, 100)}"`;
  const over = () =>
    `${label} was not kept: it is over the ${budget.bytes} bytes left of the run's ${budget.maxBytes}-byte limit`;
  if (a.path === undefined) {
    notes.push(`${label} was not kept: its body is over what a test may attach in one try`);
    return;
  }
  const body = await readAttachment(
    at,
    a.path,
    budget.bytes,
    (error) => (isOverSize(error) ? over() : `${label} was not kept: its file ${error.reason}`),
    notes,
  );
  if (!body) return;
  budget.files -= 1;
  budget.bytes -= body.length;
  const type = keptType(a.contentType);
  // Text is masked as every text of the run is; bytes cannot be (docs/PLAYWRIGHT.md, "Attachments").
  const kept = attachmentClass(type) === 'text' ? Buffer.from(at.mask.text(body.toString('utf8'))) : body;
  writer.recordRunFile('attachment', name, type, kept);
}

/**
 * Stores a try's attachments and returns the run's notes about those not kept. Their paths are the
 * test's, so the tenant's: each is read through no link in any folder, from the scratch directory's
 * own file system only (readScratchFile), even while the sandbox still runs; one that is refused (a
 * link, a FIFO, a path out of the scratch directory, too large) is not kept, and the notes say why.
 * A trace is stored as the test wrote it: Playwright records what the page was sent, so a run's
 * secret headers can be in it (docs/PLAYWRIGHT.md).
 */
export async function storeAttachments(
  writer: FileSink,
  result: { attachments: readonly PlaywrightAttachment[] },
  at: AttachmentSource,
): Promise<string[]> {
  const notes: string[] = [];
  for (const attachment of result.attachments) {
    if (attachment.automatic) await storeAutomatic(writer, attachment, at, notes);
    else await storeOwn(writer, attachment, at, notes);
  }
  return notes;
}

/** The note about attachments left out for the count, once the run's tries are recorded. */
export function overCountNote(budget: AttachmentBudget, limits: Pick<RunLimits, 'maxAttachments'>): string[] {
  if (budget.overCount === 0) return [];
  return [`${budget.overCount} attachment(s) were not kept: a run keeps at most ${limits.maxAttachments}`];
}
