// The public parse: the parser behind a least-recently-used cache by exact text, syntax errors
// reported as AppError.
import { AppError } from "../../errors.ts";
import type { Ast } from "./ast.ts";
import { SyntaxProblem } from "./lexer.ts";
import { EXPRESSION_LIMITS } from "./limits.ts";
import { parseUncached } from "./parser.ts";

/** Parsed ASTs (or the syntax error) by exact text; conditions are re-evaluated on every tick. */
const cache = new Map<string, Ast | ParseFailure>();

class ParseFailure {
  constructor(readonly message: string) {}
}

/**
 * Parses expression text into an AST; throws `AppError("invalid_argument", "expression error: …")`
 * on a syntax error. A wrapper `{{ … }}` around the entire text is stripped (B.2). Empty text
 * parses to `null` (falsy), as in Orch8.
 */
export function parseExpression(text: string): Ast {
  const hit = cache.get(text);
  if (hit !== undefined) {
    // Refresh recency: Map iteration order is insertion order, so the first key is the oldest.
    cache.delete(text);
    cache.set(text, hit);
    if (hit instanceof ParseFailure) throw new AppError("invalid_argument", hit.message);
    return hit;
  }
  let result: Ast | ParseFailure;
  try {
    result = parseUncached(text);
  } catch (error) {
    if (!(error instanceof SyntaxProblem)) throw error;
    result = new ParseFailure(`expression error: ${error.message} at position ${error.at} in \`${excerpt(text)}\``);
  }
  if (text.length <= EXPRESSION_LIMITS.length) {
    if (cache.size >= EXPRESSION_LIMITS.cacheEntries) cache.delete(cache.keys().next().value as string);
    cache.set(text, result);
  }
  if (result instanceof ParseFailure) throw new AppError("invalid_argument", result.message);
  return result;
}

function excerpt(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
