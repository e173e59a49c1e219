import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BOUNDS } from '../domain/bounds.ts';
import { AppError, isAppError } from '../domain/errors.ts';
import { isDiskFull } from '../lib/disk-full.ts';
import { describeValidationError } from './validation.ts';

/** Renders an AppError: its message as `error`, its code for 400/5xx, its extra fields. */
export function sendAppError(reply: FastifyReply, err: AppError): FastifyReply {
  if (err.headers) reply.headers(err.headers);
  // Every 503 says when to come back (docs/errors.md: overloaded has Retry-After).
  if (err.status === 503 && !reply.hasHeader('retry-after')) reply.header('Retry-After', '5');
  const body: Record<string, unknown> = { error: err.message };
  if (err.exposeCode) body.code = err.code;
  Object.assign(body, err.body);
  return reply.status(err.status).send(body);
}

/** Maps everything that can go wrong to the shapes of docs/errors.md. */
export function toAppError(
  err: FastifyError | Error,
  bodyLimitBytes: number = BOUNDS.http.bodyBytes,
): AppError | null {
  if (isAppError(err)) return err;
  const fe = err as FastifyError;
  if (fe.validation && fe.validation.length > 0) {
    const first = fe.validation[0];
    const part = fe.validationContext ?? 'body';
    const message = first
      ? describeValidationError(first as Parameters<typeof describeValidationError>[0], part)
      : 'invalid request';
    return new AppError('invalid_request', message);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'payload_too_large',
        `request body is larger than ${bodyLimitBytes / 1024} KiB`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      // 400, not 415: every malformed body is a 400 (docs/errors.md).
      return new AppError('invalid_request', 'body must be JSON (Content-Type: application/json)');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'body must be a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body');
    default:
      break;
  }
  if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_request', 'body is not valid JSON');
  }
  if (fe.statusCode === 400) return new AppError('invalid_request', 'malformed request');
  // Any write that found the disk full and was not mapped where it happened (the database
  // adapter and the disk storage map theirs): the same 503 as theirs, never a 500.
  if (isDiskFull(err)) {
    return new AppError('storage_error', 'the disk is full, retry shortly', {
      status: 503,
      cause: err,
    });
  }
  return null;
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A route with its own body limit (the payment webhook) names that one.
    const appError = toAppError(err, request.routeOptions.bodyLimit ?? BOUNDS.http.bodyBytes);
    if (appError) {
      if (appError.status >= 500) {
        request.log.error(
          { err: appError.cause ?? appError, code: appError.code },
          appError.message,
        );
      }
      return sendAppError(reply, appError);
    }
    request.log.error({ err }, 'unhandled error');
    return sendAppError(reply, new AppError('internal_error', 'internal server error'));
  });
}
