import { Type } from 'typebox';
import { CAPTURE_LIMITS } from '../ports.ts';

/** A CSS selector as a request field; the page checks its syntax before loading anything. */
export const Selector = Type.String({ minLength: 1, maxLength: CAPTURE_LIMITS.maxSelectorLength });
