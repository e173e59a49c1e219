import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { findDevice } from '../devices.ts';
import { defineOption } from './define.ts';

/**
 * A preset sets the viewport, scale, mobile and touch emulation and user agent; a field the
 * request gives itself wins. The plan's bounds still hold: a preset's size is capped at the
 * plan's maximum like `width` and `height`, and its scale at the plan's maximum scale (a
 * phone on Free renders at 1x), where an explicit `device_scale_factor` above it is refused.
 */
export const device = defineOption({
  name: 'device',
  schema: Type.String({
    minLength: 1,
    maxLength: 64,
    description:
      'A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch ' +
      'emulation and user agent. Fields given explicitly win.',
  }),
  resolve(value, { input, plan }) {
    if (value === undefined) return {};
    const preset = findDevice(value);
    if (!preset) {
      throw new AppError(
        'invalid_request',
        `device "${value.slice(0, 64)}" is not a known preset (GET /v1/devices lists them)`,
      );
    }
    const given = (field: string) => input[field] !== undefined;
    return {
      ...(given('width') ? {} : { width: Math.min(preset.width, plan.max_width) }),
      ...(given('height') ? {} : { height: Math.min(preset.height, plan.max_height) }),
      ...(given('device_scale_factor')
        ? {}
        : {
            deviceScaleFactor: Math.min(preset.deviceScaleFactor, plan.max_device_scale_factor),
          }),
      ...(given('user_agent') ? {} : { userAgent: preset.userAgent }),
      mobile: preset.mobile,
      hasTouch: preset.hasTouch,
    };
  },
  // Everything it sets is keyed by its own field (width, scale, user agent, mobile, touch).
  cacheKey: () => undefined,
});
