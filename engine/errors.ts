// The one error type of Bulkhead. Codes are mapped once to tRPC codes (server/api/trpc.ts) and
// once to HTTP statuses (server/rest), so every surface answers the same thing for the same fault.

export type ErrorCode =
  | "not_found"
  | "invalid_argument"
  | "already_exists"
  | "conflict"
  | "unauthorized"
  | "forbidden"
  | "payload_too_large"
  | "unprocessable"
  | "rate_limited"
  | "unavailable"
  | "unsupported"
  | "internal";

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Where in the input the problem is, for validation errors. */
    readonly path?: (string | number)[],
  ) {
    super(message);
    this.name = "AppError";
  }
}

/**
 * The single answer for an object the caller may not see, whether it is missing or belongs to
 * another tenant: same code, same words, so no response reveals that a foreign id exists.
 */
export function notFound(what: string): AppError {
  return new AppError("not_found", `${what} not found`);
}

export function isAppError(error: unknown, code?: ErrorCode): error is AppError {
  return error instanceof AppError && (code === undefined || error.code === code);
}
