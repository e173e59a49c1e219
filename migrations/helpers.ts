import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';
export type MigrationFn = (db: Kysely<unknown>, dialect: Dialect) => Promise<void>;

/** An auto-incrementing integer primary key on either dialect. */
export function withId<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: Dialect,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'postgres'
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Epoch milliseconds, UTC. */
export const millis = (dialect: Dialect) => (dialect === 'postgres' ? 'bigint' : 'integer');

/** A foreign key to another table's id. */
export const ref = (dialect: Dialect) => (dialect === 'postgres' ? 'bigint' : 'integer');

export const flag = (dialect: Dialect) => (dialect === 'postgres' ? 'boolean' : 'integer');

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
