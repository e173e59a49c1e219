import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';

/** A CSS selector as a request field; the page checks its syntax before loading anything. */
export const Selector = Type.String({ minLength: 1, maxLength: BOUNDS.capture.maxSelectorLength });
