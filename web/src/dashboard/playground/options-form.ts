import { useState } from 'react';
import { DEFAULT_OPTIONS, type Options } from './capture-body.ts';

/**
 * What a capture form asks for: a capture in the playground, or a monitor's runs (which
 * compare images: no PDF, no batch or Markdown, and always fresh where the plan allows it).
 */
export type CaptureKind = 'capture' | 'monitor';

type OptionOf<T> = { [K in keyof Options]: Options[K] extends T ? K : never }[keyof Options];

/**
 * What the capture form's parts need: the options and the ways to change them. The
 * playground and the monitors page's create form hold one each.
 */
export interface OptionsForm {
  options: Options;
  set<K extends keyof Options>(name: K, value: Options[K]): void;
  /** Value and change handler of a text option, for InputField and TextAreaField. */
  text(name: OptionOf<string>): { value: string; onValueChange(value: string): void };
  /** Checked state and change handler of a yes/no option, for Check. */
  flag(name: OptionOf<boolean>): { checked: boolean; onCheckedChange(checked: boolean): void };
  /** Back to where the form started. */
  reset(): void;
}

export function useOptionsForm(initial: Options = DEFAULT_OPTIONS): OptionsForm {
  const [options, setOptions] = useState<Options>(initial);
  const set = <K extends keyof Options>(name: K, value: Options[K]) =>
    setOptions((o) => ({ ...o, [name]: value }));
  return {
    options,
    set,
    text: (name) => ({ value: options[name], onValueChange: (value) => set(name, value) }),
    flag: (name) => ({ checked: options[name], onCheckedChange: (checked) => set(name, checked) }),
    reset: () => setOptions(initial),
  };
}
