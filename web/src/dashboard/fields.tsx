import {
  type ChangeEvent,
  createElement,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useId,
} from 'react';

/**
 * The dashboard's form fields, written once: a `.field` holding its label, one control and
 * an optional hint that describes the control. A page hands in the value and gets the typed
 * text back; the control's other attributes (type, limits, placeholder) pass through.
 */
interface FieldProps {
  label: ReactNode;
  /** A line under the control that describes it. */
  hint?: ReactNode;
  /** The id of a hint elsewhere that describes the control (one hint for several fields). */
  describedBy?: string;
  /** A class beside `field`: `field-narrow`, `grow`. */
  fieldClass?: string;
  /** Monospaced text: keys, selectors, code. */
  mono?: boolean;
}

type Control<Attributes> = Omit<Attributes, 'id' | 'className' | 'value' | 'onChange'> & {
  value: string | number;
  onValueChange(value: string): void;
};

const inputClass = (mono: boolean | undefined) => (mono ? 'input input-mono' : 'input');

/** A field component for one kind of control: `input`, `textarea` or `select`. */
function fieldOf<Attributes>(tag: 'input' | 'textarea' | 'select') {
  return function ControlField({
    label,
    hint,
    describedBy,
    fieldClass,
    mono,
    onValueChange,
    ...attributes
  }: FieldProps & Control<Attributes>) {
    const id = useId();
    const hintId = useId();
    const describer = hint ? hintId : describedBy;
    return (
      <div className={fieldClass ? `field ${fieldClass}` : 'field'}>
        <label htmlFor={id}>{label}</label>
        {createElement(tag, {
          id,
          className: inputClass(mono),
          ...attributes,
          ...(describer ? { 'aria-describedby': describer } : {}),
          onChange: (e: ChangeEvent<HTMLInputElement>) => onValueChange(e.target.value),
        })}
        {hint && (
          <p id={hintId} className="field-hint">
            {hint}
          </p>
        )}
      </div>
    );
  };
}

export const InputField = fieldOf<InputHTMLAttributes<HTMLInputElement>>('input');
export const TextAreaField = fieldOf<TextareaHTMLAttributes<HTMLTextAreaElement>>('textarea');
/** A select; its options are the children. */
export const SelectField = fieldOf<SelectHTMLAttributes<HTMLSelectElement>>('select');

/**
 * A count from 1 up (a width, a number of hours): an empty or unreadable entry counts as 1,
 * so the value stays a number while someone types.
 */
export function NumberField({
  onNumberChange,
  ...field
}: Omit<Parameters<typeof InputField>[0], 'type' | 'min' | 'value' | 'onValueChange'> & {
  value: number;
  onNumberChange(value: number): void;
}) {
  return (
    <InputField
      type="number"
      min={1}
      {...field}
      onValueChange={(value) => onNumberChange(Number(value) || 1)}
    />
  );
}

/** A checkbox inside its label, as the `.checks` rows show them. */
export function Check({
  checked,
  onCheckedChange,
  children,
}: {
  checked: boolean;
  onCheckedChange(checked: boolean): void;
  children: ReactNode;
}) {
  return (
    <label className="check">
      <input
        type="checkbox"
        checked={checked}
        onChange={(e) => onCheckedChange(e.target.checked)}
      />
      {children}
    </label>
  );
}
