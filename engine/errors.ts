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

/** Marks AppErrors across copies of this module (Next bundles the engine more than once). */
const APP_ERROR = Symbol.for("bulkhead.AppError");

export class AppError extends Error {
  readonly [APP_ERROR] = true;

  /**
   * `instanceof AppError` holds for an AppError from any copy of this module: the web server
   * shares one Storage between bundles, so an error thrown by one bundle's copy reaches code
   * that imported another. Without this it would be answered as an internal error.
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[APP_ERROR] === true;
  }

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
