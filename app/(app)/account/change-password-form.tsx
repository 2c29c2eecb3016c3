"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ChangeError } from "../../_components/confirm-button";
import { useTRPC } from "../../_components/trpc";

// As server/auth/password.ts: bcrypt reads 72 bytes of UTF-8 at most. The server checks again. No
// maxLength on the inputs: it would cut a pasted password short without a word (and the password
// manager would keep the whole one).
const MIN_LENGTH = 8;
const MAX_BYTES = 72;
const utf8Length = (text: string) => new TextEncoder().encode(text).length;

/**
 * Current password, new password and its confirmation. The change ends every session of the
 * user, this one included, so on success the browser goes to sign-in with a notice.
 */
export function ChangePasswordForm({ email }: { email: string }) {
  const trpc = useTRPC();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [problem, setProblem] = useState<{ field: "newPassword" | "confirm"; message: string } | null>(null);
  const [leaving, setLeaving] = useState(false);
  const change = useMutation(trpc.account.changePassword.mutationOptions());

  // A refusal about one field is said under that field; anything else above the form.
  const refusedField = change.error?.data?.inputPath?.[0];
  const fieldError = (field: string) =>
    problem?.field === field ? problem.message : refusedField === field ? change.error?.message : null;
  const formError = change.error && refusedField !== "currentPassword" && refusedField !== "newPassword" ? change.error : null;

  return (
    <form
      className="account-form"
      aria-label="Change password"
      onSubmit={(event) => {
        event.preventDefault();
        if (utf8Length(next) > MAX_BYTES) {
          return setProblem({ field: "newPassword", message: `At most ${MAX_BYTES} bytes: this one is ${utf8Length(next)} (letters outside ASCII take 2–4 each).` });
        }
        if (confirm !== next) return setProblem({ field: "confirm", message: "The two new passwords differ." });
        setProblem(null);
        change.mutate(
          { currentPassword: current, newPassword: next },
          {
            onSuccess: () => {
              setLeaving(true);
              // A full load: this session has ended, nothing of this page is worth keeping.
              window.location.assign("/signin?notice=password-changed");
            },
          },
        );
      }}
    >
      <ChangeError what="change the password" error={formError} />
      {/* For password managers: the account the new password belongs to. */}
      <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
      <PasswordField
        id="current-password"
        label="Current password"
        autoComplete="current-password"
        value={current}
        onChange={setCurrent}
        error={fieldError("currentPassword")}
      />
      <PasswordField
        id="new-password"
        label="New password"
        autoComplete="new-password"
        minLength={MIN_LENGTH}
        hint={`At least ${MIN_LENGTH} characters, at most ${MAX_BYTES} bytes.`}
        value={next}
        onChange={setNext}
        error={fieldError("newPassword")}
      />
      <PasswordField
        id="confirm-password"
        label="Confirm new password"
        autoComplete="new-password"
        minLength={MIN_LENGTH}
        value={confirm}
        onChange={setConfirm}
        error={fieldError("confirm")}
      />
      <button className="btn btn-primary" type="submit" disabled={change.isPending || leaving}>
        {change.isPending || leaving ? "Changing password…" : "Change password"}
      </button>
    </form>
  );
}

function PasswordField({
  id,
  label,
  autoComplete,
  minLength,
  hint,
  value,
  onChange,
  error,
}: {
  id: string;
  label: string;
  autoComplete: string;
  minLength?: number;
  hint?: string;
  value: string;
  onChange: (value: string) => void;
  error: string | null | undefined;
}) {
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(" ") || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        className="input"
        id={id}
        name={id}
        type="password"
        required
        minLength={minLength}
        autoComplete={autoComplete}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        value={value}
        onChange={(event) => onChange(event.target.value)}
      />
      {hint && (
        <span className="field-hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
      {error && (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
