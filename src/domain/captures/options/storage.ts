import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { defineOption, planRestriction } from './define.ts';

/** What a path template may name (docs/destinations.md). */
export const PATH_FIELDS = ['id', 'hash', 'ext', 'year', 'month', 'day', 'host'] as const;
export const DEFAULT_PATH = '{id}.{ext}';

/** A template's problem in words, or null: safe characters, known fields, no `..`, {ext}. */
export function pathProblem(path: string): string | null {
  if (!/^[A-Za-z0-9._\-/{}]+$/.test(path)) {
    return 'storage.path may hold letters, digits, ".", "_", "-", "/" and {fields} only';
  }
  for (const [, name] of path.matchAll(/\{([^}]*)\}/g)) {
    if (!(PATH_FIELDS as readonly string[]).includes(name ?? '')) {
      return `storage.path has an unknown field {${name}}; known: ${PATH_FIELDS.map((f) => `{${f}}`).join(' ')}`;
    }
  }
  if (path.startsWith('/') || path.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    return 'storage.path must be relative, without empty, "." or ".." segments';
  }
  return null;
}

export const storage = defineOption({
  name: 'storage',
  schema: Type.Object(
    {
      destination: Type.String({
        pattern: '^dst_[0-9A-Za-z]{24}$',
        description: 'One of your storage destinations (POST /v1/storage-destinations).',
      }),
      path: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 512,
          description:
            'The key under the destination\'s prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default "{id}.{ext}".',
        }),
      ),
      hosted: Type.Optional(
        Type.Boolean({
          description: 'false: no copy is kept here (no image_url); always rendered anew.',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'Write the capture into your own S3-compatible bucket too (docs/destinations.md). ' +
        'An upload that fails is a 502 storage_destination_error, with no unit spent.',
    },
  ),
  resolve(value, { plan }) {
    if (value === undefined) return { storage: null };
    if (plan.storage_destinations === 0) throw planRestriction('storage', plan);
    const path = value.path ?? DEFAULT_PATH;
    const problem = pathProblem(path);
    if (problem !== null) throw new AppError('invalid_request', problem);
    return { storage: { destination: value.destination, path, hosted: value.hosted ?? true } };
  },
  // Where a copy goes does not change the image; an unhosted capture is never cached.
  cacheKey: () => undefined,
});
