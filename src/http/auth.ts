import type { FastifyReply, FastifyRequest } from 'fastify';
import { sessionUser } from '../domain/accounts/session-user.ts';
import type { DomainContext } from '../domain/context.ts';
import { AppError } from '../domain/errors.ts';
import { authenticateKey } from '../domain/keys/authenticate-key.ts';
import type { ApiKeyRecord, User } from '../domain/store.ts';
import type { SessionCookiePolicy } from './cookie-policy.ts';

export const SESSION_COOKIE = 'session';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the API-key hook on programmatic routes. */
    apiKey: { key: ApiKeyRecord; user: User } | null;
    /** Set by the session hook on dashboard routes. */
    account: User | null;
  }
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Refuses cookie-authenticated state changes coming from another site: an `Origin`
 * outside the dashboard origins, or `Sec-Fetch-Site: cross-site` without an allowed
 * Origin. Requests without either header (curl, server code) carry no ambient cookie risk.
 */
export function assertSameSite(request: FastifyRequest, allowedOrigins: ReadonlySet<string>): void {
  if (!STATE_CHANGING.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (!allowedOrigins.has(origin)) {
      throw new AppError('forbidden', 'cross-site request refused');
    }
    return;
  }
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw new AppError('forbidden', 'cross-site request refused');
  }
}

/** onRequest hook for programmatic routes: a valid, unrevoked `X-API-Key` or 401. */
export function apiKeyHook(ctx: DomainContext) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers['x-api-key'];
    request.apiKey = await authenticateKey(ctx, {
      key: typeof header === 'string' ? header.trim() : undefined,
    });
  };
}

/**
 * onRequest hook for dashboard routes: cross-site refusal first, then the `session`
 * cookie. An API key is never looked at here.
 */
export function sessionHook(ctx: DomainContext, allowedOrigins: ReadonlySet<string>) {
  return async (request: FastifyRequest): Promise<void> => {
    assertSameSite(request, allowedOrigins);
    const token = request.cookies[SESSION_COOKIE];
    const user = token ? await sessionUser(ctx, { token }) : null;
    if (!user) throw new AppError('unauthorized', 'unauthorized');
    request.account = user;
  };
}

export function sessionCookieOptions(policy: SessionCookiePolicy, expiresAt?: number) {
  return {
    httpOnly: true,
    sameSite: policy.sameSite,
    path: '/',
    secure: policy.secure,
    ...(expiresAt === undefined ? {} : { expires: new Date(expiresAt) }),
  };
}

export function setSessionCookie(
  reply: FastifyReply,
  session: { token: string; expiresAt: number },
  policy: SessionCookiePolicy,
): void {
  reply.setCookie(SESSION_COOKIE, session.token, sessionCookieOptions(policy, session.expiresAt));
}

export function clearSessionCookie(reply: FastifyReply, policy: SessionCookiePolicy): void {
  reply.clearCookie(SESSION_COOKIE, sessionCookieOptions(policy));
}

export function requireAccount(request: FastifyRequest): User {
  if (!request.account) throw new AppError('unauthorized', 'unauthorized');
  return request.account;
}

export function requireApiKey(request: FastifyRequest): { key: ApiKeyRecord; user: User } {
  if (!request.apiKey) throw new AppError('unauthorized', 'unauthorized');
  return request.apiKey;
}
