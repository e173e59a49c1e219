/**
 * The render section of the config for tests and benchmarks that build a renderer themselves:
 * the config's own defaults (loadConfig of an empty environment), so none is written twice,
 * with `overrides` on top.
 */
import { loadConfig, type RenderSettings } from '../../src/config/config.ts';

export function renderSettings(overrides: Partial<RenderSettings> = {}): RenderSettings {
  return { ...loadConfig({}).render, ...overrides };
}
