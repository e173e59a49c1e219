import { type Static, type TSchema, Type } from 'typebox';
import { BOUNDS } from '../domain/bounds.ts';
import { MAX_PENDING_NAMED, RENDER_PHASES, type RenderPhase } from '../domain/captures/renderer.ts';
import { CaptureWarning } from '../domain/captures/warnings.ts';

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

/** The render deadline's 504 (docs/errors.md): where the capture was, and what was loading. */
export const TimeoutBody = Type.Object(
  {
    error: Type.String({ description: 'A message naming the phase and the pending requests.' }),
    code: Type.Literal('render_timeout'),
    phase: Type.Optional(
      Type.Unsafe<RenderPhase>(
        Type.String({
          enum: [...RENDER_PHASES],
          description:
            'Where the capture was when its deadline passed: queue (a render slot), browser, ' +
            "navigation (the target's main document had not answered), load (the wait_until " +
            'event), network (the network going quiet), selector (wait_for_selector), delay, ' +
            'actions (styles, scripts, click, banners), settle, capture (the image itself). ' +
            'Absent when the capture waited for the same render on another node.',
        }),
      ),
    ),
    pending_requests: Type.Optional(
      Type.Array(Type.String(), {
        maxItems: MAX_PENDING_NAMED,
        description: `Up to ${MAX_PENDING_NAMED} requests still loading, as origin and path (never the query).`,
      }),
    ),
  },
  { description: 'Render deadline passed.' },
);

/** `fail_on` met (docs/errors.md): the warnings it named. */
export const RejectedBody = Type.Object(
  {
    error: Type.String({ description: 'A message naming the warnings.' }),
    code: Type.Literal('capture_rejected'),
    warnings: Type.Array(CaptureWarning, { description: 'The warnings `fail_on` named.' }),
  },
  { description: 'A warning named in fail_on was found; nothing stored, no quota spent.' },
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
  422: RejectedBody,
  429: RateLimitBody,
  500: ref('Unexpected server error.'),
  502: ref('The target could not be reached.'),
  503: ref('Temporarily unavailable; retry after Retry-After seconds.'),
  504: TimeoutBody,
} as const;

/** Picks error responses for a route's schema. */
export function errorResponses<K extends keyof typeof errors>(
  ...statuses: K[]
): Record<K, TSchema> {
  const out = {} as Record<K, TSchema>;
  for (const s of statuses) out[s] = errors[s];
  return out;
}

/** One page of a cursor listing (screenshots, monitors, runs): its items and the next cursor. */
export const CursorPage = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  });

/** A listing's page as the API answers it, each item shaped by `item`. */
export const cursorPage = <I, O>(
  page: { items: readonly I[]; nextCursor: string | null },
  item: (value: I) => O,
) => ({
  data: page.items.map(item),
  has_more: page.nextCursor !== null,
  next_cursor: page.nextCursor,
});

export const IsoDateTime = Type.String({ format: 'date-time' });
export const NullableIso = Type.Union([IsoDateTime, Type.Null()]);

/** Positive integer ids only; `abc`, `-1`, `1.5` and `0` are malformed. */
export function parseId(raw: string): number | null {
  if (!/^[1-9][0-9]*$/.test(raw)) return null;
  const n = Number(raw);
  // Larger than any id we could have issued: well-formed, simply not found.
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}
