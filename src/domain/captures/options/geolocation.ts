import { Type } from 'typebox';
import { defineOption } from './define.ts';

/** Metres, when the request gives no accuracy. */
const DEFAULT_ACCURACY_M = 100;

export const geolocation = defineOption({
  name: 'geolocation',
  schema: Type.Object(
    {
      latitude: Type.Number({ minimum: -90, maximum: 90 }),
      longitude: Type.Number({ minimum: -180, maximum: 180 }),
      accuracy: Type.Optional(
        Type.Number({ minimum: 0, maximum: 100_000, description: 'Metres; default 100.' }),
      ),
    },
    {
      additionalProperties: false,
      description:
        "The position the page's Geolocation API reports, permission granted (without it " +
        'the page is denied). Goes well with `timezone`, `locale` and `proxy_country`.',
    },
  ),
  resolve: (value) => ({
    geolocation:
      value === undefined
        ? null
        : {
            latitude: value.latitude,
            longitude: value.longitude,
            accuracy: value.accuracy ?? DEFAULT_ACCURACY_M,
          },
  }),
  cacheKey: (o) =>
    o.geolocation === null
      ? undefined
      : [o.geolocation.latitude, o.geolocation.longitude, o.geolocation.accuracy],
});
