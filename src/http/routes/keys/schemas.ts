import { type Static, Type } from 'typebox';
import type { ApiKeyRecord } from '../../../domain/store.ts';
import { toIso } from '../../../lib/time.ts';
import { IsoDateTime, NullableIso } from '../../schemas.ts';

export const KeyItem = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  name: Type.String(),
  prefix: Type.String({ description: 'The first 12 characters of the key, e.g. `sk_live_Ab3x`.' }),
  created_at: IsoDateTime,
  last_used_at: NullableIso,
});

export const keyItem = (key: ApiKeyRecord): Static<typeof KeyItem> => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  created_at: toIso(key.createdAt),
  last_used_at: key.lastUsedAt === null ? null : toIso(key.lastUsedAt),
});
