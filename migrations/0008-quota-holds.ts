import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull, ref, withId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // A quota unit taken for a capture that is still rendering (docs/plans-and-limits.md,
  // "Plans"): written with the reservation, renewed by its node while the capture runs,
  // deleted when the capture delivers (the unit is kept) or fails (the unit goes back). A
  // hold past `expires_at` belonged to a node that died: every node's sweep gives its unit
  // back.
  await withId(db.schema.createTable('quota_holds'), dialect)
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('period', 'text', notNull)
    .addColumn('day', 'text')
    .addColumn('expires_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('quota_holds_expiry_idx')
    .on('quota_holds')
    .column('expires_at')
    .execute();
}
