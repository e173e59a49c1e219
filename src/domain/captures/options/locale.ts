import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

const invalid = () =>
  new AppError('invalid_request', 'locale must be a BCP 47 language tag, such as en-US or de');

/** The tag's canonical form (`EN-us` -> `en-US`), or an invalid_request. */
export function canonicalLocale(tag: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(tag)) throw invalid();
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    if (canonical === undefined) throw invalid();
    return canonical;
  } catch {
    throw invalid();
  }
}

export const locale = defineOption({
  name: 'locale',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.capture.maxLocaleLength,
    description:
      'A BCP 47 language tag: the Accept-Language header, navigator.language and the ' +
      "page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9).",
  }),
  resolve: (value) => ({ locale: value === undefined ? null : canonicalLocale(value) }),
  cacheKey: (o) => o.locale ?? undefined,
});
