// `credentials://<id>` and `credentials://<id>/<field>` in step params (wire-format N): any string
// value that is exactly a reference becomes the credential's value (parsed as JSON when it is
// JSON), or that top-level field of it. Resolved after templates, so a template may produce a
// reference. What was put in is also returned, so it can be scrubbed from whatever comes back.
import type { OpenedCredential } from "../storage/index.ts";

const REFERENCE = /^credentials:\/\/([^/]+)(?:\/([^/]+))?$/;

/** Secrets this short are not scrubbed from outputs: they would blank out ordinary text. */
const SCRUB_MIN_LENGTH = 4;
const SCRUBBED = "[credential]";

export class CredentialError extends Error {}

function walk(value: unknown, visit: (text: string) => unknown): unknown {
  if (typeof value === "string") return visit(value);
  if (Array.isArray(value)) return value.map((item) => walk(item, visit));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, visit)]));
  return value;
}

/** The ids the params refer to, each once. */
export function referencedCredentials(params: unknown): string[] {
  const ids = new Set<string>();
  walk(params, (text) => {
    const match = REFERENCE.exec(text);
    if (match) ids.add(match[1]!);
    return text;
  });
  return [...ids];
}

function parsed(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function stringsIn(value: unknown, into: Set<string>): void {
  walk(value, (text) => {
    if (text.length >= SCRUB_MIN_LENGTH) into.add(text);
    return text;
  });
}

export interface ResolvedParams {
  params: unknown;
  /** The secret texts put into the params, for `scrub`. */
  secrets: string[];
}

/**
 * The params with every reference replaced. A missing id (another tenant's reads as missing), a
 * disabled credential or a missing field is a CredentialError, which fails the step for good.
 */
export async function resolveCredentialRefs(
  params: unknown, open: (ids: readonly string[]) => Promise<Map<string, OpenedCredential>>,
): Promise<ResolvedParams> {
  const ids = referencedCredentials(params);
  if (ids.length === 0) return { params, secrets: [] };
  const opened = await open(ids);
  const secrets = new Set<string>();
  const resolved = walk(params, (text) => {
    const match = REFERENCE.exec(text);
    if (!match) return text;
    const [, id, field] = match as unknown as [string, string, string | undefined];
    const credential = opened.get(id);
    if (!credential) throw new CredentialError(`credentials: no credential registered with id '${id}'`);
    if (!credential.enabled) throw new CredentialError(`credentials: credential '${id}' is disabled`);
    let value = parsed(credential.value);
    if (field !== undefined) {
      if (!value || typeof value !== "object" || Array.isArray(value) || !(field in value)) {
        throw new CredentialError(`credentials: credential '${id}' has no field '${field}'`);
      }
      value = (value as Record<string, unknown>)[field];
    }
    stringsIn(value, secrets);
    if (credential.value.length >= SCRUB_MIN_LENGTH) secrets.add(credential.value);
    return value;
  });
  // Longest first, so a secret that contains another is scrubbed whole.
  return { params: resolved, secrets: [...secrets].sort((a, b) => b.length - a.length) };
}

/** `value` with every occurrence of a secret replaced, so no resolved value is stored or shown. */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  return walk(value, (text) => secrets.reduce((out, secret) => out.split(secret).join(SCRUBBED), text)) as T;
}
