import { BOUNDS } from '../bounds.ts';
import { AppError } from '../errors.ts';

/** Emails compare case-insensitively; the stored form is trimmed and lowercased. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > BOUNDS.account.emailMax || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw new AppError('invalid_request', 'email must be a valid email address');
  }
  return email;
}

export function checkPassword(password: string): void {
  // Characters are code points, as the route schema counts them (an emoji is one).
  const length = [...password].length;
  if (length < BOUNDS.account.passwordMin || length > BOUNDS.account.passwordMax) {
    throw new AppError(
      'invalid_request',
      `password must be ${BOUNDS.account.passwordMin} to ${BOUNDS.account.passwordMax} characters`,
    );
  }
}
