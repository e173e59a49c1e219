import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import { hashPassword } from '../passwords.ts';
import type { User } from '../store.ts';
import { checkPassword, normalizeEmail } from './normalize-email.ts';
import { startSession } from './start-session.ts';

export async function signUp(
  ctx: DomainContext,
  options: { email: string; password: string },
): Promise<{ user: User; session: { token: string; expiresAt: number } }> {
  const email = normalizeEmail(options.email);
  checkPassword(options.password);
  const passwordHash = await hashPassword(options.password);
  const created = await ctx.store.users.create({
    email,
    passwordHash,
    plan: 'free',
    now: ctx.clock(),
  });
  if (created === 'email_taken') {
    throw new AppError('conflict', 'an account with this email already exists');
  }
  const session = await startSession(ctx, { userId: created.id });
  return { user: created, session };
}
