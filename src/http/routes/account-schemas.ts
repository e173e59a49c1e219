import { type Static, Type } from 'typebox';
import { BOUNDS } from '../../domain/bounds.ts';
import type { User } from '../../domain/store.ts';
import { toIso } from '../../lib/time.ts';
import { IsoDateTime } from '../schemas.ts';

export const UserBody = Type.Object(
  {
    user: Type.Object({
      id: Type.Integer(),
      email: Type.String(),
      plan: Type.String({ enum: ['free', 'pro'] }),
      created_at: IsoDateTime,
    }),
  },
  { description: 'The signed-in account.' },
);

export const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: BOUNDS.account.emailMax }),
    password: Type.String({ minLength: 1, maxLength: BOUNDS.account.loginPasswordMax }),
  },
  { additionalProperties: false },
);

export const userBody = (user: User): Static<typeof UserBody> => ({
  user: { id: user.id, email: user.email, plan: user.plan, created_at: toIso(user.createdAt) },
});
