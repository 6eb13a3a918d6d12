import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { listMigrations, migrateDatabase } from '@testrun/core/migrate';
import { testDb } from '../support/harness';
import { present } from '../support/present';

/**
 * The test database of this jest run is built only from prisma/migrations. This proves it is the
 * database schema.prisma describes: the generated client's data model (models, fields, column names,
 * types) plus what only schema.prisma states (nullability, ids, uniques, indexes, relations,
 * defaults, enums) against information_schema and pg_catalog.
 */

type RuntimeField = { name: string; kind: 'scalar' | 'enum' | 'object'; type: string; dbName?: string };
type RuntimeModel = { dbName: string | null; fields: RuntimeField[] };

type ParsedField = { name: string; type: string; optional: boolean; list: boolean; attrs: string };
type ParsedModel = { name: string; fields: ParsedField[]; blockAttrs: string[] };

const SCHEMA = readFileSync(path.resolve(__dirname, '../../prisma/schema.prisma'), 'utf8');

function parseSchema(text: string) {
  const clean = text.replace(/\/\/.*$/gm, '');
  const models: ParsedModel[] = [];
  const enums = new Map<string, string[]>();
  for (const [, kind, name = '', body = ''] of clean.matchAll(/^(model|enum)\s+(\w+)\s*\{([\s\S]*?)^\}/gm)) {
    const lines = body
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    if (kind === 'enum') {
      enums.set(name, lines);
      continue;
    }
    const model: ParsedModel = { name, fields: [], blockAttrs: [] };
    for (const line of lines) {
      if (line.startsWith('@@')) model.blockAttrs.push(line);
      else {
        const f = /^(\w+)\s+(\w+)(\[\])?(\?)?\s*(.*)$/.exec(line);
        if (f?.[1] && f[2])
          model.fields.push({ name: f[1], type: f[2], list: !!f[3], optional: !!f[4], attrs: f[5] ?? '' });
      }
    }
    models.push(model);
  }
  return { models, enums };
}

/** The first group of `pattern` in `text`; throws naming `what` when it does not match. */
function capture(pattern: RegExp, text: string, what: string): string {
  return present(pattern.exec(text)?.[1], `${what} in "${text}"`);
}

const PG_TYPE: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  Boolean: 'boolean',
  DateTime: 'timestamp with time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim().replace(/^"|"$/g, ''))
    .filter(Boolean);

describe('a database built only from the migrations matches schema.prisma', () => {
  const { models: parsed, enums } = parseSchema(SCHEMA);
  const db = testDb();
  let runtime: Record<string, RuntimeModel>;
  let pg: Client;
  beforeAll(async () => {
    runtime = (db as unknown as { _runtimeDataModel: { models: Record<string, RuntimeModel> } })._runtimeDataModel
      .models;
    pg = new Client({ connectionString: process.env.DATABASE_URL });
    await pg.connect();
  });
  afterAll(async () => {
    await pg.end();
    await db.$disconnect();
  });

  const generated = (m: ParsedModel) => present(runtime[m.name], `the generated client's model ${m.name}`);
  const columnName = (m: ParsedModel, field: string) =>
    generated(m).fields.find((f) => f.name === field)?.dbName ?? field;
  const tableName = (m: ParsedModel) => generated(m).dbName ?? m.name;

  it('the generated client and schema.prisma describe the same models and fields', () => {
    expect(Object.keys(runtime).sort()).toEqual(parsed.map((m) => m.name).sort());
    for (const m of parsed) {
      expect([m.name, generated(m).fields.map((f) => f.name)]).toEqual([m.name, m.fields.map((f) => f.name)]);
    }
  });

  it('tables, columns, types and nullability', async () => {
    const { rows } = await pg.query<{
      table_name: string;
      column_name: string;
      data_type: string;
      udt_name: string;
      is_nullable: string;
    }>(
      `SELECT table_name, column_name, data_type, udt_name, is_nullable FROM information_schema.columns
       WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const actual = rows
      .map(
        (r) =>
          `${r.table_name}.${r.column_name} ${r.data_type === 'USER-DEFINED' ? r.udt_name : r.data_type === 'ARRAY' ? `${r.udt_name.slice(1)}[]` : r.data_type} ${r.is_nullable === 'YES' ? 'null' : 'not null'}`,
      )
      .sort();
    const expected: string[] = [];
    for (const m of parsed) {
      for (const f of generated(m).fields) {
        if (f.kind === 'object') continue;
        const p = present(
          m.fields.find((x) => x.name === f.name),
          `field ${f.name} of ${m.name} in schema.prisma`,
        );
        const type = f.kind === 'enum' ? f.type : PG_TYPE[f.type];
        expect([m.name, f.name, type]).toEqual([m.name, f.name, expect.any(String)]);
        // A list (`String[]`) is a Postgres array of its element type.
        const column = p.list ? `${type}[]` : type;
        expected.push(`${tableName(m)}.${f.dbName ?? f.name} ${column} ${p.optional ? 'null' : 'not null'}`);
      }
    }
    expect(actual).toEqual(expected.sort());
  });

  it('timestamps keep millisecond precision as declared (@db.Timestamptz(3))', async () => {
    const { rows } = await pg.query<{ k: string; p: number }>(
      `SELECT table_name || '.' || column_name AS k, datetime_precision AS p FROM information_schema.columns
       WHERE table_schema = 'public' AND data_type = 'timestamp with time zone' AND table_name <> '_prisma_migrations'`,
    );
    const expected = parsed.flatMap((m) =>
      m.fields.filter((f) => f.type === 'DateTime').map((f) => `${tableName(m)}.${columnName(m, f.name)}`),
    );
    expect(rows.map((r) => r.k).sort()).toEqual(expected.sort());
    for (const r of rows) expect([r.k, r.p]).toEqual([r.k, 3]);
  });

  it('enums and their values', async () => {
    const { rows } = await pg.query<{ name: string; values: string[] }>(
      `SELECT t.typname::text AS name, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS values
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.name, r.values]))).toEqual(Object.fromEntries(enums));
  });

  it('primary keys, unique constraints and indexes (names, columns, uniqueness)', async () => {
    const { rows } = await pg.query<{ indexname: string; tablename: string; indexdef: string }>(
      `SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'`,
    );
    const actual = rows
      .map((r) => {
        const cols = capture(/\((.*)\)$/, r.indexdef, 'the columns of an index');
        return `${r.indexname} ${r.tablename}(${list(cols).join(',')})${/CREATE UNIQUE/.test(r.indexdef) ? ' unique' : ''}`;
      })
      .sort();
    const expected: string[] = [];
    for (const m of parsed) {
      const t = tableName(m);
      const cols = (names: string[]) => names.map((n) => columnName(m, n));
      for (const f of m.fields) {
        if (/@id\b/.test(f.attrs)) expected.push(`${t}_pkey ${t}(${cols([f.name]).join(',')}) unique`);
        if (/@unique\b/.test(f.attrs))
          expected.push(`${t}_${cols([f.name]).join('_')}_key ${t}(${cols([f.name]).join(',')}) unique`);
      }
      for (const a of m.blockAttrs) {
        const b = /^@@(id|unique|index)\(\[([^\]]*)\]/.exec(a);
        if (!b) continue;
        const c = cols(list(b[2] ?? ''));
        if (b[1] === 'id') expected.push(`${t}_pkey ${t}(${c.join(',')}) unique`);
        if (b[1] === 'unique') expected.push(`${t}_${c.join('_')}_key ${t}(${c.join(',')}) unique`);
        if (b[1] === 'index') expected.push(`${t}_${c.join('_')}_idx ${t}(${c.join(',')})`);
      }
    }
    expect(actual).toEqual(expected.sort());
  });

  it('foreign keys with their referential actions', async () => {
    const { rows } = await pg.query<{ def: string }>(
      `SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) AS def FROM pg_constraint
       WHERE contype = 'f' AND connamespace = 'public'::regnamespace`,
    );
    const actual = rows.map((r) => r.def.replace(/"/g, '')).sort();
    const expected: string[] = [];
    const byName = new Map(parsed.map((m) => [m.name, m]));
    for (const m of parsed) {
      for (const f of m.fields) {
        const rel = /@relation\(([^)]*)\)/.exec(f.attrs)?.[1];
        const fields = rel === undefined ? undefined : /fields:\s*\[([^\]]*)\]/.exec(rel)?.[1];
        if (rel === undefined || fields === undefined) continue;
        const target = present(byName.get(f.type), `model ${f.type} in schema.prisma`);
        const from = list(fields).map((n) => columnName(m, n));
        const to = list(capture(/references:\s*\[([^\]]*)\]/, rel, 'the references of a relation')).map((n) =>
          columnName(target, n),
        );
        const onDelete = /onDelete:\s*(\w+)/.exec(rel)?.[1] ?? (f.optional ? 'SetNull' : 'Restrict');
        const action = {
          Cascade: ' ON DELETE CASCADE',
          Restrict: ' ON DELETE RESTRICT',
          SetNull: ' ON DELETE SET NULL',
          NoAction: '',
        }[onDelete];
        expected.push(
          `${tableName(m)} FOREIGN KEY (${from.join(', ')}) REFERENCES ${tableName(target)}(${to.join(', ')}) ON UPDATE CASCADE${action}`,
        );
      }
    }
    expect(actual).toEqual(expected.sort());
  });

  /**
   * A list default (`["run"]`) or a text default (`"steps"`) as Postgres reports it (`ARRAY['run'::text]`,
   * `'steps'::text`); anything else as written.
   */
  const pgDefault = (d: string) => {
    if (/^"[^"]*"$/.test(d)) return `'${JSON.parse(d) as string}'::text`;
    const list = /^\[(.*)\]$/.exec(d)?.[1];
    if (list === undefined) return d;
    return `ARRAY[${(JSON.parse(`[${list}]`) as string[]).map((v) => `'${v}'::text`).join(', ')}]`;
  };

  it('column defaults', async () => {
    const { rows } = await pg.query<{ k: string; d: string }>(
      `SELECT table_name || '.' || column_name AS k, column_default AS d FROM information_schema.columns
       WHERE table_schema = 'public' AND column_default IS NOT NULL AND table_name <> '_prisma_migrations'`,
    );
    const expected: Record<string, string> = {};
    for (const m of parsed) {
      for (const f of m.fields) {
        const d = /@default\(([^()]*(?:\(\))?)\)/.exec(f.attrs)?.[1];
        if (d === undefined) continue;
        expected[`${tableName(m)}.${columnName(m, f.name)}`] = d === 'now()' ? 'CURRENT_TIMESTAMP' : pgDefault(d);
      }
    }
    expect(Object.fromEntries(rows.map((r) => [r.k, r.d]))).toEqual(expected);
  });

  it('every migration is recorded as Prisma records it, and applying again changes nothing', async () => {
    const { rows } = await pg.query<{ migration_name: string; checksum: string }>(
      'SELECT migration_name, checksum FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name',
    );
    expect(rows.map((r) => r.migration_name)).toEqual(listMigrations());
    for (const r of rows) expect(r.checksum).toMatch(/^[0-9a-f]{64}$/);
    const again = await migrateDatabase(present(process.env.DATABASE_URL, 'DATABASE_URL'));
    expect(again).toEqual({ applied: [], alreadyApplied: listMigrations() });
  });
});
