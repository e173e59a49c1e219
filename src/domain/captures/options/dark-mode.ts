import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const darkMode = defineOption({
  name: 'dark_mode',
  schema: Type.Boolean(),
  resolve: (value) => ({ darkMode: value ?? false }),
  cacheKey: (o) => o.darkMode,
});
