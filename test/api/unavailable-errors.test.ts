// isUnavailableError on real error objects: produced here by pg, Prisma (with @prisma/adapter-pg) and
// ioredis talking to loopback servers that refuse, reset, or answer the Postgres startup with an
// ErrorResponse of a chosen SQLSTATE, as a Postgres starting up or shutting down does.
import { createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import request from 'supertest';
import { generateApiKey } from '@testrun/core/api-keys';
import { createPrisma } from '@testrun/core/db';
import { isUnavailableError } from '../../apps/api/src/errors';
import { rejectionOf } from '../support/present';
import { freePort } from '../support/processes';
import { testDb } from '../support/harness';
import { bearer, buildTestApi } from './api-harness';
import { problemOf } from './typed';

/** The wire bytes of a Postgres ErrorResponse with the given SQLSTATE. */
function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

const SSL_REQUEST = 80_877_103;

/** A loopback server that speaks just enough Postgres to refuse every connection with `code`. */
async function refusingPostgres(code: string, message: string): Promise<{ url: string; server: Server }> {
  const server = createServer((socket: Socket) => {
    const refuse = () => socket.end(errorResponse(code, message));
    socket.once('data', (first: Buffer) => {
      if (first.length === 8 && first.readInt32BE(4) === SSL_REQUEST) {
        socket.write('N');
        socket.once('data', refuse);
      } else refuse();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
  return { url: `postgresql://u@127.0.0.1:${address.port}/db`, server };
}

/** The error pg and Prisma give when the server answers the startup with `code`. */
async function errorsFor(code: string, message: string): Promise<{ pg: unknown; prisma: unknown; raw: unknown }> {
  const { url, server } = await refusingPostgres(code, message);
  const db = createPrisma({ databaseUrl: url, max: 1 });
  try {
    const pg = await rejectionOf(() => new Client({ connectionString: url }).connect());
    const prisma = await rejectionOf(() => db.run.count());
    const raw = await rejectionOf(() => db.$queryRaw`SELECT 1`);
    return { pg, prisma, raw };
  } finally {
    await db.$disconnect().catch(() => undefined);
    server.close();
  }
}

describe('isUnavailableError', () => {
  it.each([
    ['57P03', 'the database system is starting up'],
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection due to crash of another server process'],
    ['53300', 'sorry, too many clients already'],
    ['08006', 'connection failure'],
    ['08001', 'could not establish connection'],
  ])('is true for %s from pg and from Prisma', async (code, message) => {
    const errors = await errorsFor(code, message);
    expect(isUnavailableError(errors.pg)).toBe(true);
    expect(isUnavailableError(errors.prisma)).toBe(true);
    expect(isUnavailableError(errors.raw)).toBe(true);
  });

  it('is false for a request-class SQLSTATE from the same path', async () => {
    const errors = await errorsFor('42P01', 'relation "x" does not exist');
    expect(isUnavailableError(errors.pg)).toBe(false);
    expect(isUnavailableError(errors.prisma)).toBe(false);
    expect(isUnavailableError(errors.raw)).toBe(false);
  });

  it('is true for a refused connection (pg ECONNREFUSED, Prisma P1001)', async () => {
    const url = `postgresql://u@127.0.0.1:${await freePort()}/db`;
    expect(isUnavailableError(await rejectionOf(() => new Client({ connectionString: url }).connect()))).toBe(true);
    const db = createPrisma({ databaseUrl: url, max: 1 });
    const prismaError = await rejectionOf(() => db.run.count());
    await db.$disconnect().catch(() => undefined);
    expect(prismaError).toMatchObject({ code: 'P1001' });
    expect(isUnavailableError(prismaError)).toBe(true);
  });

  it('is true for a connection the server resets or closes mid-startup', async () => {
    const server = createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
    const url = `postgresql://u@127.0.0.1:${address.port}/db`;
    const pgError = await rejectionOf(() => new Client({ connectionString: url }).connect());
    const db = createPrisma({ databaseUrl: url, max: 1 });
    const prismaError = await rejectionOf(() => db.run.count());
    await db.$disconnect().catch(() => undefined);
    server.close();
    expect(isUnavailableError(pgError)).toBe(true);
    expect(isUnavailableError(prismaError)).toBe(true);
  });

  it('is true for Redis that cannot be reached', async () => {
    const redis = new Redis({
      host: '127.0.0.1',
      port: await freePort(),
      maxRetriesPerRequest: 1,
      retryStrategy: () => 50,
      lazyConnect: true,
    });
    redis.on('error', () => undefined);
    const error = await rejectionOf(() => redis.ping());
    redis.disconnect();
    expect(isUnavailableError(error)).toBe(true);
  });

  it('is false for request errors from the real database', async () => {
    const db = testDb();
    const unique = await rejectionOf(() => db.$executeRawUnsafe('SELECT * FROM no_such_table_here'));
    expect(isUnavailableError(unique)).toBe(false);
    expect(isUnavailableError(new Error('boom'))).toBe(false);
    expect(isUnavailableError(null)).toBe(false);
  });
});

describe('the API while Postgres is starting up', () => {
  it('answers 503 service_unavailable with Retry-After, also for /readyz', async () => {
    const { url, server } = await refusingPostgres('57P03', 'the database system is starting up');
    const api = buildTestApi({ env: { DATABASE_URL: url } });
    try {
      const keyed = await request(api.app).get('/api/v1/runs/run_x').set(bearer(generateApiKey().key));
      expect(keyed.status).toBe(503);
      expect(keyed.headers['retry-after']).toBe('5');
      problemOf(keyed, 'service_unavailable');
      const ready = await request(api.app).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.headers['retry-after']).toBe('5');
    } finally {
      await api.close();
      server.close();
    }
  });
});
