// Expressions (wire-format B.2): router `condition`, loop `condition`/`break_on`, step `when`,
// `retry.retry_if`. A tokenizer and a recursive-descent parser build an AST (cached by text);
// the evaluator walks it. No eval, no Function. Work is bounded: the text length, the nesting
// depth (so no input can overflow the stack) and the arrays functions will scan are capped.
// Evaluation never throws: odd operands, unknown functions and missing paths give null.
// No Node-only imports anywhere under ./expression/, so this can run in the browser.
//
// This file is the public API; import from here, not from ./expression/. The parts:
//   limits.ts     EXPRESSION_LIMITS
//   ast.ts        the AST types
//   lexer.ts      text → tokens
//   parser.ts     tokens → AST
//   cache.ts      parseExpression: the parser behind an LRU cache, syntax errors as AppError
//   evaluate.ts   evaluate, evaluateCondition
//   values.ts     truthiness, `==` and ordering
//   functions.ts  the built-in function table
//   dates.ts      timestamps for format_date and day_of_week
//   sources.ts    where now(), random() and uuid() come from
export type { Scope } from "./paths.ts";
export type { ArithmeticOperator, Ast, CompareOperator } from "./expression/ast.ts";
export { parseExpression } from "./expression/cache.ts";
export { evaluate, evaluateCondition, type EvaluateOptions } from "./expression/evaluate.ts";
export { EXPRESSION_LIMITS } from "./expression/limits.ts";
export { systemSources, type ExpressionSources } from "./expression/sources.ts";
export { compareStrings, isTruthy, jsonEquals } from "./expression/values.ts";
