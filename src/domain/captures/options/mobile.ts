import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const mobile = defineOption({
  name: 'mobile',
  schema: Type.Boolean({
    description:
      "Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. " +
      "Default: the device preset's, else false.",
  }),
  resolve: (value, { resolved }) => ({ mobile: value ?? resolved.mobile ?? false }),
  cacheKey: (o) => (o.mobile ? true : undefined),
});
