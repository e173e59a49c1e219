import { ACCOUNT_LIMITS } from '../context.ts';
import { AppError } from '../errors.ts';

/** Emails compare case-insensitively; the stored form is trimmed and lowercased. */
export function normalizeEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (email.length > ACCOUNT_LIMITS.emailMax || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw new AppError('invalid_request', 'email must be a valid email address');
  }
  return email;
}

export function checkPassword(password: string): void {
  const { passwordMin, passwordMax } = ACCOUNT_LIMITS;
  // Characters are code points, as the route schema counts them (an emoji is one).
  const length = [...password].length;
  if (length < passwordMin || length > passwordMax) {
    throw new AppError(
      'invalid_request',
      `password must be ${passwordMin} to ${passwordMax} characters`,
    );
  }
}
