import { Type } from 'typebox';
import { DEVICES } from '../../../domain/captures/devices.ts';
import type { App } from '../../types.ts';

const DeviceItem = Type.Object({
  name: Type.String({ description: 'The value of `device`.' }),
  label: Type.String(),
  width: Type.Integer({ description: 'Viewport width, CSS px.' }),
  height: Type.Integer({ description: 'Viewport height, CSS px.' }),
  device_scale_factor: Type.Number(),
  mobile: Type.Boolean(),
  has_touch: Type.Boolean(),
  user_agent: Type.Union([Type.String(), Type.Null()], {
    description: "null: the capture's default user agent (Chrome with the engine's version).",
  }),
});

const BODY = {
  data: DEVICES.map((d) => ({
    name: d.name,
    label: d.label,
    width: d.width,
    height: d.height,
    device_scale_factor: d.deviceScaleFactor,
    mobile: d.mobile,
    has_touch: d.hasTouch,
    user_agent: d.userAgent,
  })),
};

/** The device presets `device` takes, as data (the playground's list, clients' pickers). */
export function registerListDevices(app: App): void {
  app.get(
    '/v1/devices',
    {
      schema: {
        tags: ['screenshots'],
        summary: 'The device presets of the capture option `device` (public)',
        response: { 200: Type.Object({ data: Type.Array(DeviceItem) }) },
      },
    },
    async () => BODY,
  );
}
