import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';
import { HEADER_TEXT } from './header-text.ts';

export const userAgent = defineOption({
  name: 'user_agent',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.capture.maxUserAgentLength,
    description:
      "The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA " +
      'client hints and navigator.userAgentData follow it. Default: Chrome with the version ' +
      "of the service's Chromium (never HeadlessChrome).",
  }),
  resolve(value) {
    if (value !== undefined && !HEADER_TEXT.test(value)) {
      throw new AppError(
        'invalid_request',
        'user_agent may hold printable ASCII characters only (no line breaks)',
      );
    }
    return { userAgent: value ?? null };
  },
  cacheKey: (o) => o.userAgent ?? undefined,
});
