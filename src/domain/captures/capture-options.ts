import { sha256Hex } from '../../lib/crypto.ts';
import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { ImageFormat, RenderOptions, WaitUntil } from './renderer.ts';

/** The capture request body after schema validation (shapes and ranges already checked). */
export interface CaptureInput {
  url: string;
  format?: ImageFormat;
  width?: number;
  height?: number;
  full_page?: boolean;
  quality?: number;
  fresh?: boolean;
  device_scale_factor?: number;
  wait_until?: WaitUntil;
  delay?: number;
  wait_for_selector?: string;
  selector?: string;
  dark_mode?: boolean;
  reduced_motion?: boolean;
  hide_selectors?: string[];
  omit_background?: boolean;
}

export const CAPTURE_DEFAULTS = {
  format: 'png' as ImageFormat,
  width: 1920,
  height: 1080,
  quality: 80,
  waitUntil: 'load' as WaitUntil,
} as const;

const restricted = (what: string, plan: Plan) =>
  new AppError('plan_restriction', `${what} is not available on the ${plan.name} plan`);

/**
 * Applies the plan's rules to a request: refuses what the plan does not allow (400
 * plan_restriction), caps the viewport at the plan's maximum, fills defaults.
 */
export function resolveCaptureOptions(input: CaptureInput, url: URL, plan: Plan): RenderOptions {
  const format = input.format ?? CAPTURE_DEFAULTS.format;
  if (!plan.formats.includes(format)) restrictedThrow(`format ${format}`, plan);
  if (input.fresh === true && !plan.fresh) restrictedThrow('fresh', plan);
  const dsf = input.device_scale_factor ?? 1;
  if (dsf > plan.max_device_scale_factor) {
    if (plan.max_device_scale_factor === 1)
      restrictedThrow('device_scale_factor other than 1', plan);
    throw new AppError(
      'plan_restriction',
      `device_scale_factor must be at most ${plan.max_device_scale_factor} on the ${plan.name} plan`,
    );
  }
  const fullPage = input.full_page ?? false;
  if (fullPage && !plan.full_page) restrictedThrow('full_page', plan);
  const omitBackground = input.omit_background ?? false;
  if (omitBackground && format === 'jpeg') {
    throw new AppError(
      'invalid_request',
      'omit_background needs format png or webp (jpeg has no transparency)',
    );
  }
  return {
    url: url.href,
    format,
    quality: input.quality ?? CAPTURE_DEFAULTS.quality,
    width: Math.min(input.width ?? CAPTURE_DEFAULTS.width, plan.max_width),
    height: Math.min(input.height ?? CAPTURE_DEFAULTS.height, plan.max_height),
    maxWidth: plan.max_width,
    fullPage,
    deviceScaleFactor: dsf,
    waitUntil: input.wait_until ?? CAPTURE_DEFAULTS.waitUntil,
    delay: input.delay ?? 0,
    waitForSelector: input.wait_for_selector ?? null,
    selector: input.selector ?? null,
    darkMode: input.dark_mode ?? false,
    reducedMotion: input.reduced_motion ?? false,
    hideSelectors: input.hide_selectors ?? [],
    omitBackground,
  };
}

function restrictedThrow(what: string, plan: Plan): never {
  throw restricted(what, plan);
}

/**
 * The result-cache key: a hash (never a slug) of the owner and every option that changes
 * the image, so one account's image is never served to another and different options are
 * different entries.
 */
export function cacheKeyFor(owner: string, options: RenderOptions): string {
  const parts = [
    owner,
    options.url,
    options.format,
    options.width,
    options.height,
    options.maxWidth,
    options.fullPage,
    options.quality,
    options.deviceScaleFactor,
    options.waitUntil,
    options.delay,
    options.waitForSelector,
    options.selector,
    options.darkMode,
    options.reducedMotion,
    options.hideSelectors,
    options.omitBackground,
  ];
  return sha256Hex(JSON.stringify(parts));
}
