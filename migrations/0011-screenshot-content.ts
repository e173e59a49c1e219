import type { Kysely } from 'kysely';
import type { Dialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  // The page's content stored beside the image (`content`): `{"kinds":[...],"truncated":b}`
  // as JSON, so a cache hit answers its URLs like the render that made it; null without it.
  await db.schema.alterTable('screenshots').addColumn('content', 'text').execute();
}
