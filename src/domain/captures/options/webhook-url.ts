import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

/**
 * Where an async capture's result is POSTed (docs/api.md, "Webhooks"). Its address rules are
 * a target's (the route checks them, 400 url_not_allowed); here only that it goes with
 * `async`.
 */
export const webhookUrl = defineOption({
  name: 'webhook_url',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.jobs.webhookUrlMaxLength,
    description:
      'With async: an http(s) URL the result is POSTed to (Standard Webhooks signature), ' +
      'under the same address rules as `url`.',
  }),
  resolve(value, { input }) {
    if (value !== undefined && input.async !== true) {
      throw new AppError('invalid_request', 'webhook_url is only allowed with async: true');
    }
    return {};
  },
  cacheKey: () => undefined,
});
