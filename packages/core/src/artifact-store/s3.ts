import { Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { GetObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import {
  ArtifactStoreUnavailableError,
  checkArtifactKey,
  checkRangeShape,
  type ArtifactStore,
  type ByteRange,
  type OpenedArtifact,
} from './store';

/** Where the S3 store keeps artifacts and how it reaches them. Never credentials: those come from the SDK's default chain. */
export type S3ArtifactStoreOptions = {
  bucket: string;
  /** Key prefix inside the bucket, without slashes at either end; '' for the bucket's root. */
  prefix: string;
  /** AWS_REGION; any value for most S3-compatible servers. */
  region: string;
  /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL: an S3-compatible server instead of AWS. */
  endpoint?: string;
  /** ARTIFACTS_S3_FORCE_PATH_STYLE: `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO and most others). */
  forcePathStyle: boolean;
  /** Explicit credentials instead of the default chain (environment, profile, web identity, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
};

/** How long a connection to the object store may take to open: an unreachable endpoint is an outage in seconds, not a hang. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long a request's socket may stay silent (a stalled store, or a reader that stopped reading) before it is cut. */
const SOCKET_TIMEOUT_MS = 60_000;
/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1_000;

type Sdk = typeof S3Sdk;
let sdk: Promise<Sdk> | undefined;

/**
 * The AWS SDK, loaded on the first call of an S3 store: it takes some 50 to 100 ms of CPU to load,
 * which a process with a local store (and every test file that loads this code) never needs.
 */
function loadSdk(): Promise<Sdk> {
  return (sdk ??= import('@aws-sdk/client-s3'));
}

/** The HTTP status of an SDK error, if it got an answer. */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('$metadata' in error)) return undefined;
  const metadata = error.$metadata as { httpStatusCode?: unknown } | undefined;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

/** `Content-Range: bytes start-end/size` of a ranged answer. */
function parseContentRange(header: string | undefined): { start: number; end: number; size: number } | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '');
  return match ? { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) } : null;
}

/**
 * Exactly `length` bytes of `source` after skipping `skip`: for a server that answers a range with
 * more than was asked (some S3-compatible servers send the whole object for `bytes=0-0`). Returning
 * early destroys `source`, which ends the download.
 */
async function* exactBytes(source: Readable, skip: number, length: number): AsyncGenerator<Buffer> {
  let toSkip = skip;
  let left = length;
  for await (const data of source) {
    let chunk = data as Buffer;
    if (toSkip >= chunk.length) {
      toSkip -= chunk.length;
      continue;
    }
    chunk = chunk.subarray(toSkip);
    toSkip = 0;
    if (chunk.length >= left) {
      yield chunk.subarray(0, left);
      return;
    }
    left -= chunk.length;
    yield chunk;
  }
  throw new Error(`the object store ended an artifact ${left} bytes early`);
}

/**
 * Artifacts as objects in an S3 bucket (AWS, MinIO, Ceph, R2…), through the AWS SDK v3, one object
 * per key below an optional prefix. Reads stream: a range is one GetObject with `Range`, nothing is
 * buffered, and destroying the stream aborts the request. The SDK retries what may pass (throttling,
 * 5xx, a dropped connection) a few times; what still fails is an ArtifactStoreUnavailableError, as a
 * disk fault is for the local store.
 */
export class S3ArtifactStore implements ArtifactStore {
  /** The SDK and its client, made on first use (see loadSdk). */
  private s3: Promise<{ sdk: Sdk; client: S3Client }> | undefined;
  private closed = false;

  constructor(private readonly options: S3ArtifactStoreOptions) {}

  private connect(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.s3 ??= loadSdk().then((loaded) => {
      const client = new loaded.S3Client({
        region: this.options.region,
        endpoint: this.options.endpoint,
        forcePathStyle: this.options.forcePathStyle,
        credentials: this.options.credentials,
        requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS },
      });
      // Closed while the SDK loaded: no connection is ever kept.
      if (this.closed) client.destroy();
      return { sdk: loaded, client };
    });
    return this.s3;
  }

  private objectKey(key: string): string {
    return this.options.prefix ? `${this.options.prefix}/${checkArtifactKey(key)}` : checkArtifactKey(key);
  }

  async put(key: string, body: Buffer): Promise<void> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    const command = new sdk.PutObjectCommand({
      Bucket: this.options.bucket,
      Key: objectKey,
      Body: body,
      ContentLength: body.length,
    });
    try {
      await client.send(command);
    } catch (error) {
      throw new ArtifactStoreUnavailableError('write an artifact', error);
    }
  }

  async open(key: string, range?: ByteRange): Promise<OpenedArtifact | null> {
    const objectKey = this.objectKey(key);
    checkRangeShape(range);
    const { sdk, client } = await this.connect();
    const abort = new AbortController();
    let answer: GetObjectCommandOutput;
    try {
      answer = await client.send(
        new sdk.GetObjectCommand({
          Bucket: this.options.bucket,
          Key: objectKey,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
        { abortSignal: abort.signal },
      );
    } catch (error) {
      const status = statusOf(error);
      // Only a missing object is "no artifact": a missing bucket or a refusal is the store's fault.
      if (status === 404 && (error as { name?: unknown }).name === 'NoSuchKey') return null;
      if (status === 416)
        throw new RangeError(`byte range ${range?.start}-${range?.end} is outside the artifact`, { cause: error });
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
    const body = answer.Body;
    if (!(body instanceof Readable)) {
      abort.abort();
      throw new ArtifactStoreUnavailableError('read an artifact', new Error('the object store sent no body'));
    }
    // A stream that is destroyed before its end (the reader went away) aborts the request.
    body.once('close', () => {
      if (!body.readableEnded) abort.abort();
    });
    const sent = parseContentRange(answer.ContentRange) ?? {
      start: 0,
      end: (answer.ContentLength ?? 0) - 1,
      size: answer.ContentLength ?? 0,
    };
    const wanted = range ?? { start: 0, end: sent.size - 1 };
    if (wanted.end >= sent.size) {
      // S3 answers a range that runs past the end with the bytes there are; the contract is a RangeError.
      body.destroy();
      throw new RangeError(`byte range ${wanted.start}-${wanted.end} is outside an artifact of ${sent.size} bytes`);
    }
    if (sent.start > wanted.start || sent.end < wanted.end) {
      body.destroy();
      const answered = `bytes ${sent.start}-${sent.end}/${sent.size}`;
      throw new ArtifactStoreUnavailableError(
        'read an artifact',
        new Error(`asked ${wanted.start}-${wanted.end}, got ${answered}`),
      );
    }
    const exact = sent.start === wanted.start && sent.end === wanted.end;
    const stream = exact
      ? body
      : Readable.from(exactBytes(body, wanted.start - sent.start, wanted.end - wanted.start + 1), {
          objectMode: false,
        });
    return { stream, size: sent.size };
  }

  async get(key: string): Promise<Buffer | null> {
    const opened = await this.open(key);
    if (!opened) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of opened.stream) chunks.push(chunk as Buffer);
    } catch (error) {
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
    return Buffer.concat(chunks);
  }

  async deletePrefix(prefix: string): Promise<void> {
    const below = `${this.objectKey(prefix)}/`;
    const { sdk, client } = await this.connect();
    try {
      let token: string | undefined;
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: below, ContinuationToken: token }),
        );
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        for (let i = 0; i < keys.length; i += DELETE_BATCH) {
          const done = await client.send(
            new sdk.DeleteObjectsCommand({
              Bucket: this.options.bucket,
              Delete: { Objects: keys.slice(i, i + DELETE_BATCH), Quiet: true },
            }),
          );
          const failed = done.Errors?.[0];
          if (failed)
            throw new Error(`could not delete ${failed.Key ?? 'an object'}: ${failed.Code ?? failed.Message}`);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw new ArtifactStoreUnavailableError('delete artifacts', error);
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    const command = new sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: objectKey });
    try {
      // S3 answers a deletion of a key that has no object with success too.
      await client.send(command);
    } catch (error) {
      throw new ArtifactStoreUnavailableError('delete an artifact', error);
    }
  }

  async modifiedAt(key: string): Promise<Date | null> {
    const objectKey = this.objectKey(key);
    const { sdk, client } = await this.connect();
    const command = new sdk.HeadObjectCommand({ Bucket: this.options.bucket, Key: objectKey });
    try {
      const head = await client.send(command);
      return head.LastModified ?? null;
    } catch (error) {
      // A HEAD has no body, so a missing object is only its status (the SDK names it NotFound).
      if (statusOf(error) === 404) return null;
      throw new ArtifactStoreUnavailableError('read an artifact', error);
    }
  }

  /** Closes the client's connections. */
  close(): void {
    this.closed = true;
    void this.s3?.then(({ client }) => client.destroy()).catch(() => undefined);
  }
}
