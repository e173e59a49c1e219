import { clientIpKey } from '../client-ip.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import { decoyHash, verifyPassword } from '../passwords.ts';
import type { User } from '../store.ts';
import { startSession } from './start-session.ts';

const INVALID = 'invalid email or password';

/**
 * Unknown email and wrong password give the same answer after the same work. Failures are
 * counted per email and per client IP (IPv6 by /64); past either limit every attempt is refused until
 * the window passes, right password or not.
 *
 * Each attempt takes its point from both counters atomically before the password is
 * checked, so simultaneous guesses cannot all slip under the limit; a successful login
 * gives its points back (and clears the email's failures).
 */
export async function logIn(
  ctx: DomainContext,
  options: { email: string; password: string; ip: string },
): Promise<{ user: User; session: { token: string; expiresAt: number } }> {
  const email = options.email.trim().toLowerCase();
  const { byEmail, byIp } = ctx.loginThrottle;
  // IPv6 clients by /64, like the demo: one subscriber usually holds the whole /64.
  const client = clientIpKey(options.ip);
  const [emailTake, ipTake] = await Promise.all([byEmail.take(email), byIp.take(client)]);
  if (!emailTake.allowed || !ipTake.allowed) {
    await Promise.all([
      emailTake.allowed ? byEmail.refund(email) : null,
      ipTake.allowed ? byIp.refund(client) : null,
    ]);
    const [state, limit] = !emailTake.allowed ? [emailTake, byEmail.limit] : [ipTake, byIp.limit];
    const retryAfter = Math.max(1, Math.ceil((state.resetAt - ctx.clock()) / 1000));
    throw new AppError('rate_limited', 'too many failed login attempts, try again later', {
      body: {
        message: 'too many failed login attempts, try again later',
        success: false,
        limit,
        used: limit,
        remaining: 0,
        reset_time: Math.ceil(state.resetAt / 1000),
      },
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  const found = await ctx.store.users.findByEmail(email);
  const ok = found?.passwordHash
    ? await verifyPassword(options.password, found.passwordHash)
    : await verifyPassword(options.password, await decoyHash()).then(() => false);
  if (!found || !ok) throw new AppError('unauthorized', INVALID);
  await Promise.all([byEmail.reset(email), byIp.refund(client)]);
  const session = await startSession(ctx, { userId: found.user.id });
  return { user: found.user, session };
}
