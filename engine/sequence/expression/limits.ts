// The caps that bound one expression's cost (text, nesting, scanned arrays, built strings) and
// the size of the parse cache.

export const EXPRESSION_LIMITS = {
  /** Characters of expression text. */
  length: 10_000,
  /** Nesting of parentheses, calls, array literals, ternary branches and unary operators. */
  depth: 64,
  /** Elements (or keys) an array function will scan; above it the function gives null. */
  arrayElements: 100_000,
  /** Longest string `+` or `json()` will build (characters); above it the result is null. */
  stringLength: 4 * 1024 * 1024,
  /** Parsed expressions kept, least recently used dropped first. */
  cacheEntries: 1000,
} as const;
