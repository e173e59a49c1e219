import type { Kysely } from 'kysely';
import type { Dialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  // The page's metadata (`metadata: true`), as JSON, so a cache hit answers it like the
  // render that made it; null for captures without it.
  await db.schema.alterTable('screenshots').addColumn('metadata', 'text').execute();
}
