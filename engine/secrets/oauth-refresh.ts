// OAuth2 refresh (wire-format N): every minute, each enabled oauth2 credential with a refresh_url
// that expires within five minutes is refreshed by a form-encoded POST (grant_type=refresh_token).
// The answer's access_token (and refresh_token, if sent) is merged into the value, and expires_at
// becomes now + expires_in. The call goes through the same outbound guard as http_request (allow-
// list, DNS vetting, the tenant's per-host slots). Any failure leaves the credential as it was.
import type { OutboundGuard } from "../handlers/outbound-request.ts";
import { sendOutbound } from "../handlers/outbound-request.ts";
import type { Logger } from "../logger.ts";
import type { BackendStore, ExpiringCredential, RefreshedCredential } from "../storage/index.ts";

export const REFRESH_EVERY_MS = 60_000;
export const REFRESH_AHEAD_MS = 5 * 60_000;
const REFRESH_TIMEOUT_MS = 10_000;
/** Credentials one sweep of one backend refreshes at most; the rest wait a minute. */
const SWEEP_LIMIT = 100;

function parsedObject(value: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The refresh call; null when it failed in any way (the reason is logged, never a token). */
async function callRefresh(credential: ExpiringCredential, guard: OutboundGuard, now: Date, log: Logger): Promise<RefreshedCredential | null> {
  const skip = (reason: string) => {
    log.warn({ tenant_id: credential.tenantId, credential_id: credential.id, reason }, "credential refresh failed");
    return null;
  };
  let url: URL;
  try {
    url = new URL(credential.refreshUrl);
  } catch {
    return skip("refresh_url is not a URL");
  }
  const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: credential.refreshToken });
  const result = await sendOutbound({
    tenantId: credential.tenantId, method: "POST", url, timeoutMs: REFRESH_TIMEOUT_MS, signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS),
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body: Buffer.from(form.toString()),
  }, guard);
  if (!result.ok) return skip(result.message);
  const { status, body } = result.response;
  if (status < 200 || status > 299) return skip(`HTTP ${status}`);
  const answer = body && typeof body === "object" ? (body as Record<string, unknown>) : {};
  if (typeof answer.access_token !== "string" || answer.access_token === "") return skip("the answer has no access_token");
  const refreshToken = typeof answer.refresh_token === "string" && answer.refresh_token !== "" ? answer.refresh_token : null;
  const value = { ...parsedObject(credential.value), access_token: answer.access_token, ...(refreshToken ? { refresh_token: refreshToken } : {}) };
  const expiresIn = typeof answer.expires_in === "number" && answer.expires_in > 0 ? answer.expires_in : null;
  // Without expires_in the token's life is unknown: it is not refreshed again until someone sets an expiry.
  return { value: JSON.stringify(value), refreshToken, expiresAt: expiresIn === null ? null : new Date(now.getTime() + expiresIn * 1000) };
}

/** One sweep of one backend; how many credentials it refreshed. */
export async function refreshExpiringCredentials(store: BackendStore, guard: OutboundGuard, log: Logger, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() + REFRESH_AHEAD_MS);
  let refreshed = 0;
  for (const key of await store.listExpiringCredentials(before, SWEEP_LIMIT)) {
    try {
      if (await store.refreshCredential(key, before, (credential) => callRefresh(credential, guard, now, log))) refreshed++;
    } catch (error) {
      log.warn({ err: error, tenant_id: key.tenantId, credential_id: key.id }, "credential refresh failed");
    }
  }
  return refreshed;
}
