import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import {
  ARTIFACT_KINDS,
  PLANS,
  RUN_OUTCOME_CODES,
  RUN_STATUSES,
  SKIP_REASONS,
  STEP_ACTIONS,
  STEP_OUTCOMES,
  type ArtifactKind,
  type Plan,
  type RunOutcomeCode,
  type RunStatus,
  type SkipReason,
  type StepAction,
  type StepOutcome,
} from '@testrun/contracts';
import { PrismaClient, type $Enums } from './generated/prisma/client';

export { Prisma, PrismaClient } from './generated/prisma/client';
export type * from './generated/prisma/client';

/** Options of {@link createPrisma}. */
export type PrismaOptions = {
  /** Postgres connection string. */
  databaseUrl: string;
  /** Pool size (default 10). */
  max?: number;
};

/** The pg pool under each client made by {@link createPrisma}, for {@link readSql}. */
const pools = new WeakMap<PrismaClient, pg.Pool>();

export function createPrisma({ databaseUrl, max = 10 }: PrismaOptions): PrismaClient {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, connectionTimeoutMillis: 5_000 });
  const client = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(client, pool);
  // Prisma ends the pool on $disconnect only when it has connected itself; a client that only
  // served readSql would keep its idle connections (and their timers) open after it.
  const disconnect = client.$disconnect.bind(client);
  client.$disconnect = async () => {
    await disconnect();
    if (!pool.ending) await pool.end();
  };
  return client;
}

/**
 * Runs one read statement (`$1`… placeholders) straight on the pool under `db`, as a prepared
 * statement named `name` (Postgres parses and plans it once per connection): the hottest reads
 * (what clients poll) skip Prisma's per-query work. Rows come as pg reads them: timestamptz as
 * Date, int as number, json as parsed values, enums as text when cast `::text`.
 */
export async function readSql<Row>(db: Db, name: string, text: string, values: unknown[]): Promise<Row[]> {
  const pool = pools.get(db);
  if (!pool) return db.$queryRawUnsafe<Row[]>(text, ...values);
  const result = await pool.query<Row & pg.QueryResultRow>({ name, text, values });
  return result.rows;
}

export type Db = PrismaClient;
/** A client or an interactive transaction of one. */
export type DbTx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

/** Holds only when `Db` and `Wire` are the same set of strings; `never` otherwise. */
type SameSet<Db extends string, Wire extends string> = [Exclude<Db, Wire> | Exclude<Wire, Db>] extends [never]
  ? readonly Wire[]
  : never;

/**
 * Each database enum with the contracts' set it stores. This compiles only while both hold the same
 * values (a value added on one side only makes its entry `never`), so a row read through Prisma is
 * already its wire type and a value written from a contracts type is always accepted.
 */
export const DB_ENUMS = {
  Plan: PLANS satisfies SameSet<$Enums.Plan, Plan>,
  RunStatus: RUN_STATUSES satisfies SameSet<$Enums.RunStatus, RunStatus>,
  ArtifactKind: ARTIFACT_KINDS satisfies SameSet<$Enums.ArtifactKind, ArtifactKind>,
  RunOutcomeCode: RUN_OUTCOME_CODES satisfies SameSet<$Enums.RunOutcomeCode, RunOutcomeCode>,
  SkipReason: SKIP_REASONS satisfies SameSet<$Enums.SkipReason, SkipReason>,
  StepOutcome: STEP_OUTCOMES satisfies SameSet<$Enums.StepOutcome, StepOutcome>,
  StepAction: STEP_ACTIONS satisfies SameSet<$Enums.StepAction, StepAction>,
} as const;
