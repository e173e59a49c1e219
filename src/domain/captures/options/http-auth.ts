import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

const Credential = Type.String({ maxLength: BOUNDS.capture.maxCredentialLength });

export const httpAuth = defineOption({
  name: 'http_auth',
  schema: Type.Object(
    { username: Credential, password: Credential },
    {
      additionalProperties: false,
      description:
        "HTTP Basic credentials, sent with the requests to the target's own origin only " +
        '(never to other origins, nor after a redirect to one). Not with an Authorization ' +
        'header in `headers`.',
    },
  ),
  resolve(value, { resolved }) {
    if (value === undefined) return { httpAuth: null };
    if (value.username === '' || value.username.includes(':')) {
      throw new AppError(
        'invalid_request',
        'http_auth.username must not be empty and must not contain ":"',
      );
    }
    // Control characters would end the header or be dropped: refused, not sent half.
    for (const field of ['username', 'password'] as const) {
      if ([...value[field]].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
        throw new AppError(
          'invalid_request',
          `http_auth.${field} must not hold control characters`,
        );
      }
    }
    if (resolved.headers?.some((h) => h.name.toLowerCase() === 'authorization')) {
      throw new AppError(
        'invalid_request',
        'http_auth is not allowed with an Authorization header in headers',
      );
    }
    return { httpAuth: { username: value.username, password: value.password } };
  },
  cacheKey: (o, digest) =>
    o.httpAuth ? digest([o.httpAuth.username, o.httpAuth.password]) : undefined,
});
