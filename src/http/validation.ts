import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { AppError } from '../domain/errors.ts';

// ajv-formats is CommonJS; its default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = {
  allErrors: false,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
};

/**
 * Bodies are validated strictly (`"1920"` is not an integer, unknown fields are errors);
 * query strings and path params arrive as text, so only they are coerced.
 */
const strictAjv = addFormats(new Ajv({ ...base, coerceTypes: false }));
const coercingAjv = addFormats(new Ajv({ ...base, coerceTypes: true }));

/**
 * A check compiled on its first use. Compiling every route's schemas when the routes are
 * registered was a fifth of a start's work on the main thread (docs/deployment.md,
 * "Start-up"); most routes are not called in a node's first seconds, and a compiled check is
 * kept for good. Fastify reads `errors` off the function it was given after a failed check.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? strictAjv : coercingAjv;
  return compiledOnFirstUse(() => ajv.compile(schema as object)) as ReturnType<
    FastifySchemaCompiler<unknown>
  >;
};

const TYPE_WORDS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'an array',
};

/** One readable sentence naming the field and the problem. */
export function describeValidationError(error: ErrorObject, part: string): string {
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    // An item of a list by its index: `requests[3].width`, as the batch's messages name it.
    .map((s, i) => (/^\d+$/.test(s) && i > 0 ? `[${s}]` : `${i > 0 ? '.' : ''}${s}`))
    .join('');
  const field = path || (part === 'body' ? 'body' : part);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path ? `${path}.` : ''}${String(p.missingProperty)} is required`;
    case 'additionalProperties':
      return `unknown field "${path ? `${path}.` : ''}${String(p.additionalProperty)}"`;
    case 'type': {
      const types = String(p.type)
        .split(',')
        .map((t) => TYPE_WORDS[t] ?? t);
      return `${field} must be ${types.join(' or ')}`;
    }
    case 'enum':
      return `${field} must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `${field} must be ${JSON.stringify(p.allowedValue)}`;
    case 'minimum':
    case 'exclusiveMinimum':
      return `${field} must be ${error.keyword === 'minimum' ? '>=' : '>'} ${String(p.limit)}`;
    case 'maximum':
    case 'exclusiveMaximum':
      return `${field} must be ${error.keyword === 'maximum' ? '<=' : '<'} ${String(p.limit)}`;
    case 'minLength':
      return Number(p.limit) === 1
        ? `${field} must not be empty`
        : `${field} must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `${field} must be at most ${String(p.limit)} characters`;
    case 'minItems':
      return `${field} must have at least ${String(p.limit)} ${Number(p.limit) === 1 ? 'item' : 'items'}`;
    case 'maxItems':
      return `${field} must have at most ${String(p.limit)} items`;
    case 'maxProperties':
      return `${field} must have at most ${String(p.limit)} entries`;
    case 'pattern':
      return `${field} has an invalid format`;
    case 'format':
      return `${field} must be a valid ${String(p.format)}`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * A body schema's check outside Fastify's own validation (a signed link's query, turned into
 * the capture body): the first problem as the same 400 a body would get.
 */
export function bodyChecker(schema: object): (value: unknown) => void {
  const validate = compiledOnFirstUse(() => strictAjv.compile(schema));
  return (value) => {
    if (validate(value)) return;
    const first = validate.errors?.[0];
    throw new AppError(
      'invalid_request',
      first ? describeValidationError(first, 'body') : 'invalid request',
    );
  };
}
