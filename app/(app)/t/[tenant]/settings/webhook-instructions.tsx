"use client";

import { useId, useRef, useState } from "react";
import styles from "./triggers.module.css";

/** Copies `value`; without clipboard access (e.g. plain http) it selects `fallback` for Ctrl+C instead. */
function CopyButton({ value, label, fallback }: { value: string; label: string; fallback: () => void }) {
  const [copy, setCopy] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        aria-label={`Copy ${label}`}
        onClick={() => {
          navigator.clipboard.writeText(value).then(
            () => setCopy("copied"),
            () => {
              fallback();
              setCopy("failed");
            },
          );
        }}
      >
        Copy
      </button>
      <span className="muted" role="status">
        {copy === "copied" ? "Copied." : copy === "failed" ? "Could not copy: it is selected, press Ctrl+C (⌘C)." : ""}
      </span>
    </>
  );
}

/** A read-only value with its Copy button, e.g. the webhook URL or the secret. */
function CopyField({ label, value, autoFocus = false }: { label: string; value: string; autoFocus?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <div className="secret-box-row">
      <input
        ref={input}
        className="input mono secret-box-value"
        readOnly
        value={value}
        aria-label={label}
        autoComplete="off"
        spellCheck={false}
        autoFocus={autoFocus}
        onFocus={(event) => event.currentTarget.select()}
      />
      <CopyButton value={value} label={label.toLowerCase()} fallback={() => input.current?.select()} />
    </div>
  );
}

/**
 * A shell example that signs and sends one webhook, for the secret just made. Single quotes are
 * safe around the URL and secret: both are URL-safe characters (slug: unreserved; secret: base64url).
 */
export function signedCurlExample(url: string, secret: string): string {
  return [
    `URL='${url}'`,
    `SECRET='${secret}'`,
    `BODY='{"hello": "world"}'`,
    `TS=$(date +%s)`,
    `NONCE=$(openssl rand -hex 16)`,
    `SIG=$(printf '%s' "$TS.$NONCE.$BODY" \\`,
    `  | openssl dgst -sha256 -hmac "$SECRET" -binary \\`,
    `  | openssl base64 -A | tr '+/' '-_' | tr -d '=')`,
    `curl -sS -X POST "$URL" \\`,
    `  -H 'content-type: application/json' \\`,
    `  -H "x-trigger-timestamp: $TS" \\`,
    `  -H "x-trigger-nonce: $NONCE" \\`,
    `  -H "x-orch8-signature: v1=$SIG" \\`,
    `  --data-raw "$BODY"`,
  ].join("\n");
}

/**
 * The one look at a new webhook trigger's signing secret: the URL, the secret and how to sign a
 * request with it, until Done. It lives only in the parent's state (never a query cache), so a
 * reload or another visit cannot show it again.
 */
export function WebhookInstructions({ slug, url, secret, onDone }: { slug: string; url: string; secret: string; onDone: () => void }) {
  const titleId = useId();
  const example = useRef<HTMLPreElement>(null);
  const script = signedCurlExample(url, secret);
  return (
    <div className="secret-box" role="region" aria-labelledby={titleId}>
      <p className="secret-box-title" id={titleId}>
        <strong>Webhook trigger &quot;{slug}&quot; created</strong> <span className="badge badge-warn">shown once</span>
      </p>
      <p className="secret-box-note">
        The signing secret is shown only now: store it where the sender can read it (e.g. a secrets manager). It cannot be
        shown again; for a new one, remove the trigger and create it again.
      </p>
      <div className={styles.fields}>
        <span className={styles.fieldName}>URL</span>
        <CopyField label="Webhook URL" value={url} />
        <span className={styles.fieldName}>Secret</span>
        {/* Focused on arrival, so keyboard users can copy it straight away. */}
        <CopyField label="Signing secret" value={secret} autoFocus />
      </div>

      <h3 className={styles.instructionsHeading}>Signing a request</h3>
      <p>
        <code>POST</code> the JSON body to the URL with these headers (the body becomes the new instance&apos;s{" "}
        <code>context.data</code>; the answer is <code>202 {"{"}&quot;instance_id&quot;, &quot;trigger&quot;{"}"}</code>, or{" "}
        <code>401</code> for any fault in them):
      </p>
      <dl className="facts">
        <dt><code>x-trigger-timestamp</code></dt>
        <dd>The time in Unix seconds; accepted from 300 s before to 60 s after the server&apos;s clock.</dd>
        <dt><code>x-trigger-nonce</code></dt>
        <dd>16 to 128 printable ASCII characters without spaces, new for every request (a nonce used once is refused).</dd>
        <dt><code>x-orch8-signature</code></dt>
        <dd>
          <code>v1=</code> then <code>base64url(HMAC-SHA256(secret, timestamp + &quot;.&quot; + nonce + &quot;.&quot; + body))</code>,
          without <code>=</code> padding, over the body&apos;s exact bytes as sent.
        </dd>
      </dl>
      <div className={styles.exampleHead}>
        <span className={styles.fieldName}>Example (shell, with openssl and curl)</span>
        <CopyButton value={script} label="example" fallback={() => selectContents(example.current)} />
      </div>
      <pre ref={example} className="json" tabIndex={0} aria-label="Signed request example">{script}</pre>
      <div className="toolbar">
        <button type="button" className="btn btn-primary" onClick={onDone}>
          Done
        </button>
        <span className="muted">I have stored the secret.</span>
      </div>
    </div>
  );
}

function selectContents(element: HTMLElement | null) {
  if (!element) return;
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}
