import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';

export { Prisma, PrismaClient } from './generated/prisma/client';
export type * from './generated/prisma/client';

/** Options of {@link createPrisma}. */
export type PrismaOptions = {
  /** Postgres connection string. */
  databaseUrl: string;
  /** Pool size (default 10). */
  max?: number;
};

export function createPrisma({ databaseUrl, max = 10 }: PrismaOptions): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5_000 });
  return new PrismaClient({ adapter });
}

export type Db = PrismaClient;
/** A client or an interactive transaction of one. */
export type DbTx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;
