import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

const invalid = (value: string) =>
  new AppError(
    'invalid_request',
    `timezone "${value.slice(0, 64)}" is not an IANA time zone name, such as Europe/Paris or UTC`,
  );

/**
 * An IANA zone name as the page will see it (`utc` -> `UTC`), or an invalid_request. Offsets
 * (`+01:00`), which newer Intl accepts, are refused: Chromium's override takes names only.
 */
export function checkTimezone(value: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value)) throw invalid(value);
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    throw invalid(value);
  }
}

export const timezone = defineOption({
  name: 'timezone',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.capture.maxTimezoneLength,
    description: "An IANA time zone name for the page's clock. Default UTC, whatever the server's.",
  }),
  resolve: (value) => ({ timezone: value === undefined ? null : checkTimezone(value) }),
  cacheKey: (o) => o.timezone ?? undefined,
});
