"use client";

// A text field for a template (B.1) or an expression (B.2): a popup offers names while typing
// (Arrow keys, Enter or Tab to take one, Escape to close), and the text is checked with the
// engine's own parser, so the error shown is the one the step would fail with.
import { useId, useRef, useState, type KeyboardEvent, type SyntheticEvent } from "react";
import { expressionProblem, templateProblem } from "../../../../../../engine/sequence/template-check.ts";
import { completionAt, type HintMode, type TemplateHints } from "./template-hints.ts";

export interface TemplateInputProps {
  id: string;
  value: string;
  mode: HintMode;
  hints: TemplateHints;
  onChange(value: string): void;
  placeholder?: string;
  describedBy?: string;
  /** When no <label> names the field. */
  label?: string;
}

export function TemplateInput({ id, value, mode, hints, onChange, placeholder, describedBy, label }: TemplateInputProps) {
  const listId = useId();
  const errorId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [caret, setCaret] = useState<number | null>(null);
  const [active, setActive] = useState(0);
  const completion = caret === null ? null : completionAt(value, caret, mode, hints);
  const options = completion?.options ?? [];
  const current = Math.min(active, Math.max(0, options.length - 1));
  const problem = mode === "template" ? templateProblem(value) : value.trim() === "" ? null : expressionProblem(value);

  const track = (event: SyntheticEvent<HTMLInputElement>) => setCaret(event.currentTarget.selectionStart);
  const choose = (index: number) => {
    const option = options[index];
    if (!completion || !option) return;
    const next = value.slice(0, completion.from) + option.insert + value.slice(completion.to);
    const at = completion.from + option.insert.length;
    onChange(next);
    setCaret(at);
    setActive(0);
    requestAnimationFrame(() => input.current?.setSelectionRange(at, at));
  };
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (options.length === 0) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setActive((current + (event.key === "ArrowDown" ? 1 : options.length - 1)) % options.length);
    } else if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      choose(current);
    } else if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      setCaret(null);
    }
  };

  return (
    <div className="tpl-field">
      <input
        ref={input}
        id={id}
        className="input"
        value={value}
        placeholder={placeholder}
        spellCheck={false}
        autoComplete="off"
        role="combobox"
        aria-label={label}
        aria-autocomplete="list"
        aria-expanded={options.length > 0}
        aria-controls={listId}
        aria-activedescendant={options.length > 0 ? `${listId}-${current}` : undefined}
        aria-invalid={problem ? true : undefined}
        aria-describedby={[describedBy, problem ? errorId : null].filter(Boolean).join(" ") || undefined}
        onChange={(event) => {
          onChange(event.target.value);
          track(event);
        }}
        onSelect={track}
        onKeyDown={onKeyDown}
        onBlur={() => setCaret(null)}
      />
      <ul id={listId} role="listbox" className="tpl-popup" hidden={options.length === 0} aria-label="Suggestions">
        {options.map((option, index) => (
          <li
            key={option.label}
            id={`${listId}-${index}`}
            role="option"
            aria-selected={index === current}
            // mousedown, not click: the input must keep focus (its blur closes the popup).
            onMouseDown={(event) => {
              event.preventDefault();
              choose(index);
            }}
          >
            {option.label}
          </li>
        ))}
      </ul>
      {problem && (
        <p id={errorId} className="field-error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
