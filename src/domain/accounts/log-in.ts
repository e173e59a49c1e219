import { ACCOUNT_LIMITS, type DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import { decoyHash, verifyPassword } from '../passwords.ts';
import type { User } from '../store.ts';
import { startSession } from './start-session.ts';

const INVALID = 'invalid email or password';

/**
 * Unknown email and wrong password give the same answer after the same work. Failures are
 * counted per email and per client IP; past either limit every attempt is refused until
 * the window passes, right password or not.
 */
export async function logIn(
  ctx: DomainContext,
  options: { email: string; password: string; ip: string },
): Promise<{ user: User; session: { token: string; expiresAt: number } }> {
  const email = options.email.trim().toLowerCase();
  const { byEmail, byIp } = ctx.loginThrottle;
  const [emailState, ipState] = await Promise.all([byEmail.peek(email), byIp.peek(options.ip)]);
  const blocked =
    emailState.used >= ACCOUNT_LIMITS.loginFailuresPerEmail
      ? { state: emailState, limit: byEmail.limit }
      : ipState.used >= ACCOUNT_LIMITS.loginFailuresPerIp
        ? { state: ipState, limit: byIp.limit }
        : null;
  if (blocked) {
    const retryAfter = Math.max(1, Math.ceil((blocked.state.resetAt - ctx.clock()) / 1000));
    throw new AppError('rate_limited', 'too many failed login attempts, try again later', {
      body: {
        message: 'too many failed login attempts, try again later',
        success: false,
        limit: blocked.limit,
        used: blocked.limit,
        remaining: 0,
        reset_time: Math.ceil(blocked.state.resetAt / 1000),
      },
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  const found = await ctx.store.users.findByEmail(email);
  const ok = found?.passwordHash
    ? await verifyPassword(options.password, found.passwordHash)
    : await verifyPassword(options.password, await decoyHash()).then(() => false);
  if (!found || !ok) {
    await Promise.all([byEmail.add(email), byIp.add(options.ip)]);
    throw new AppError('unauthorized', INVALID);
  }
  await byEmail.reset(email);
  const session = await startSession(ctx, { userId: found.user.id });
  return { user: found.user, session };
}
