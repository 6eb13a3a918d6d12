import { mkdtempSync, rmSync } from 'node:fs';
import type { Server, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { S3ArtifactStore } from '@testrun/core/artifact-store';

/** s3rver's fixed key pair: it checks request signatures against it. Not a secret of anything real. */
const ACCESS_KEY = 'S3RVER';

/** A real S3-protocol server on loopback (s3rver, files in a temporary directory) with one bucket. */
export interface S3TestServer {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  bucket: string;
  /**
   * The environment that points an API or worker process at `s3://<bucket>/<prefix>` on this server,
   * credentials included (through the AWS SDK's default chain, as in production).
   */
  env(prefix?: string): Record<string, string>;
  /** The service's S3 store on `s3://<bucket>/<prefix>` of this server, for a test's own process. */
  store(prefix: string): S3ArtifactStore;
  /** Requests whose response has neither been sent whole nor cut off: reads in flight (idle keep-alive connections do not count). */
  activeRequests(): number;
  /** Stops answering: every connection is cut and the port refuses. The objects stay on disk. */
  stop(): Promise<void>;
  /** Serves again, on the same port, the same objects (nothing when it is serving). */
  restart(): Promise<void>;
  /** Stops and removes every object. */
  close(): Promise<void>;
}

/** The http.Server inside s3rver (not in its type declarations). */
function httpServerOf(server: S3rver): Server {
  return (server as unknown as { httpServer: Server }).httpServer;
}

/** Starts an S3 server with bucket `bucket` on a free loopback port (or `port`). */
export async function startS3Server(options: { bucket?: string; port?: number } = {}): Promise<S3TestServer> {
  const bucket = options.bucket ?? 'testrun-artifacts';
  const directory = mkdtempSync(path.join(tmpdir(), 'testrun-s3-'));
  let port = options.port ?? 0;
  let server: S3rver | null = null;
  let active = 0;

  const start = async () => {
    const s3 = new S3rver({
      address: '127.0.0.1',
      port,
      directory,
      silent: true,
      configureBuckets: [{ name: bucket, configs: [] }],
    });
    port = (await s3.run()).port;
    httpServerOf(s3).on('request', (_req, res: ServerResponse) => {
      active++;
      res.once('close', () => active--);
    });
    server = s3;
  };
  const stop = async () => {
    const running = server;
    if (!running) return;
    server = null;
    const closed = running.close();
    // close() waits for idle keep-alive sockets; an outage does not.
    httpServerOf(running).closeAllConnections();
    await closed;
  };

  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: (prefix = '') => ({
      ARTIFACTS_URL: `s3://${bucket}/${prefix}`,
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_REGION: 'us-east-1',
      ARTIFACTS_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: ACCESS_KEY,
    }),
    store: (prefix) =>
      new S3ArtifactStore({
        bucket,
        prefix,
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY },
      }),
    activeRequests: () => active,
    stop,
    restart: async () => {
      if (!server) await start();
    },
    close: async () => {
      await stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
