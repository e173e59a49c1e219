import type { Kysely } from 'kysely';
import type { Dialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  // The capture's warnings (src/domain/captures/warnings.ts) as a JSON array, so a cache hit
  // answers them like the render that made it; null on records made before they existed.
  await db.schema.alterTable('screenshots').addColumn('warnings', 'text').execute();
}
