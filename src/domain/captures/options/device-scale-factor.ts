import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption, planRestriction } from './define.ts';

export const deviceScaleFactor = defineOption({
  name: 'device_scale_factor',
  schema: Type.Number({
    minimum: BOUNDS.capture.minDeviceScaleFactor,
    maximum: BOUNDS.capture.maxDeviceScaleFactor,
    description:
      `Device pixel ratio, ${BOUNDS.capture.minDeviceScaleFactor} to ` +
      `${BOUNDS.capture.maxDeviceScaleFactor} (Pro above 1).`,
  }),
  resolve(value, { plan }) {
    const dsf = value ?? 1;
    if (dsf > plan.max_device_scale_factor) {
      if (plan.max_device_scale_factor === 1) {
        throw planRestriction('device_scale_factor other than 1', plan);
      }
      throw new AppError(
        'plan_restriction',
        `device_scale_factor must be at most ${plan.max_device_scale_factor} on the ${plan.name} plan`,
      );
    }
    return { deviceScaleFactor: dsf };
  },
  cacheKey: (o) => o.deviceScaleFactor,
});
