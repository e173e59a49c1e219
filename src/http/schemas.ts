import { type Static, type TSchema, Type } from 'typebox';
import { BOUNDS } from '../domain/bounds.ts';

/** Shared request and response shapes. Every route lists every status it can answer. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'A message naming the problem.' }),
    code: Type.Optional(
      Type.String({ description: 'Stable machine-readable code (400 and 5xx answers).' }),
    ),
  },
  { $id: 'ErrorBody', description: 'Error answer (docs/errors.md).' },
);

export const RateLimitBody = Type.Object(
  {
    error: Type.String(),
    message: Type.String(),
    success: Type.Literal(false),
    limit: Type.Integer(),
    used: Type.Integer(),
    remaining: Type.Integer(),
    reset_time: Type.Integer({ description: 'Unix seconds when the window resets.' }),
    plan: Type.Optional(Type.String()),
  },
  { description: 'Rate limit exceeded (docs/errors.md).' },
);

/** The monthly quota's refusal (docs/errors.md), of every route that captures. */
export const QuotaBody = Type.Object(
  {
    error: Type.String(),
    plan: Type.String(),
    used: Type.Integer(),
    limit: Type.Integer(),
    resets_at: Type.String({ format: 'date-time' }),
  },
  { description: 'Monthly quota exhausted.' },
);

export const SuccessBody = Type.Object({ success: Type.Boolean(), message: Type.String() });

const ref = (description: string) =>
  Type.Unsafe<Static<typeof ErrorBody>>({ ...Type.Ref('ErrorBody'), description });

/** The 413 answer of a route whose body may be at most `bytes`. */
export const tooLarge = (bytes: number) => ref(`Body larger than ${bytes / 1024} KiB.`);

export const errors = {
  400: ref('Malformed request; the message names the problem.'),
  401: ref('Missing or invalid credentials.'),
  402: QuotaBody,
  403: ref('Cross-site request refused.'),
  404: ref('Not found.'),
  409: ref('Conflict.'),
  413: tooLarge(BOUNDS.http.bodyBytes),
  429: RateLimitBody,
  500: ref('Unexpected server error.'),
  502: ref('The target could not be reached.'),
  503: ref('Temporarily unavailable; retry after Retry-After seconds.'),
  504: ref('Render deadline passed.'),
} as const;

/** Picks error responses for a route's schema. */
export function errorResponses<K extends keyof typeof errors>(
  ...statuses: K[]
): Record<K, TSchema> {
  const out = {} as Record<K, TSchema>;
  for (const s of statuses) out[s] = errors[s];
  return out;
}

export const IsoDateTime = Type.String({ format: 'date-time' });
export const NullableIso = Type.Union([IsoDateTime, Type.Null()]);

/** Positive integer ids only; `abc`, `-1`, `1.5` and `0` are malformed. */
export function parseId(raw: string): number | null {
  if (!/^[1-9][0-9]*$/.test(raw)) return null;
  const n = Number(raw);
  // Larger than any id we could have issued: well-formed, simply not found.
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}
