import type { Static, TSchema } from 'typebox';
import { AppError } from '../../errors.ts';
import type { Plan } from '../../plans.ts';
import type { RenderOptions } from '../renderer.ts';

/** What the cache key is made of: the renderer's options and the cache's own lifetime. */
export interface KeyedOptions extends RenderOptions {
  /** `cache_ttl`; left out, the default. */
  cacheTtlMs?: number;
}

/** What an option resolves to: the renderer's options, plus what only the pipeline reads. */
export interface ResolvedCapture extends RenderOptions {
  /** Skip the cache lookup and render anew. */
  fresh: boolean;
  /** How old a cached result this request accepts (0: none). */
  cacheTtlMs: number;
  /** Where a copy of the result goes (`storage`); null: nowhere but here. */
  storage: StorageRequest | null;
}

/** `storage`: a destination of the account's, the object's path template, a copy kept here. */
export interface StorageRequest {
  destination: string;
  path: string;
  hosted: boolean;
}

/**
 * A credential's part of the cache key: HMAC-SHA256 of its JSON, keyed by a secret derived
 * from the server secret (docs/security.md, "Credentials at rest"). A cache key is stored
 * with every record, and a plain hash of a password or a session cookie could be guessed
 * from a copy of the database; this one cannot without the server secret.
 */
export type CredentialDigest = (value: unknown) => string;

/** What an option's rule sees besides its own value. */
export interface OptionContext {
  /** The caller's plan (an account's, or the demo's). */
  plan: Readonly<Plan>;
  /** The request's URL, already parsed by the target guard. */
  url: URL;
  /** The options before this one in the table, already resolved. */
  resolved: Readonly<Partial<ResolvedCapture>>;
  /** The request as sent (after schema validation): which fields it gave (`device`). */
  input: Readonly<Record<string, unknown>>;
}

/**
 * One capture option, declared in one place: its request field and schema (the description
 * is the OpenAPI text), its plan rule and default (`resolve`), and its part of the cache key.
 * Where it acts in the browser is the adapter's business:
 * `adapters/browser/page/steps/option-steps.ts` names its page step under the same name, and
 * typecheck fails until it does.
 */
export interface CaptureOption<
  Name extends string = string,
  Schema extends TSchema = TSchema,
  Required extends boolean = boolean,
> {
  readonly name: Name;
  readonly schema: Schema;
  /** Required in every request (none is now: url, html or markdown, capture-target.ts). */
  readonly required?: Required;
  /**
   * The request's value (undefined when left out) -> the resolved fields it sets: the
   * default filled, the plan's rule applied (an AppError refuses: 400 plan_restriction or
   * invalid_request). Rules run in table order, so the first refusal is the one reported.
   */
  resolve(value: Static<Schema> | undefined, context: OptionContext): Partial<ResolvedCapture>;
  /**
   * Its part of the result-cache key: every value that changes the image, else undefined
   * (which adds nothing, so an option added later leaves the keys of requests without it
   * unchanged, if it answers undefined at its default). Credentials for the target enter it
   * only through `digest`.
   */
  cacheKey(options: KeyedOptions, digest: CredentialDigest): unknown;
}

export const defineOption = <
  const Name extends string,
  Schema extends TSchema,
  Required extends boolean = false,
>(
  option: CaptureOption<Name, Schema, Required>,
): CaptureOption<Name, Schema, Required> => option;

export const planRestriction = (what: string, plan: Readonly<Plan>): AppError =>
  new AppError('plan_restriction', `${what} is not available on the ${plan.name} plan`);
