// The tree-walking evaluator. It never throws: odd operands, unknown functions and missing paths
// give null. Bounded by the parser's depth cap and by EXPRESSION_LIMITS.stringLength on `+`.
import { AppError } from "../../errors.ts";
import { finiteOrNull, resolveExpressionPath, toNumber, type Scope } from "../paths.ts";
import type { ArithmeticOperator, Ast, CompareOperator } from "./ast.ts";
import { parseExpression } from "./cache.ts";
import { FUNCTIONS } from "./functions.ts";
import { EXPRESSION_LIMITS } from "./limits.ts";
import { systemSources, type ExpressionSources } from "./sources.ts";
import { isTruthy, jsonEquals, ordering } from "./values.ts";

export interface EvaluateOptions {
  /** Router conditions and `when` see `outputs.*`; loop `condition` and `break_on` do not (B.2). */
  outputsVisible: boolean;
  sources?: ExpressionSources;
}

/**
 * Evaluates a parsed expression. The result may share structure with `scope`: read it, do not
 * mutate it.
 */
export function evaluate(ast: Ast, scope: Scope, options: EvaluateOptions): unknown {
  return new Evaluator(scope, options.outputsVisible, options.sources ?? systemSources).run(ast);
}

/**
 * A condition's truth (B.2). `strict` (step `when`) throws the AppError of a syntax error, which
 * fails the step; `lenient` (router, loop `condition`, `break_on`) reads a syntax error as false.
 */
export function evaluateCondition(
  text: string,
  scope: Scope,
  mode: "strict" | "lenient",
  outputsVisible: boolean,
  sources: ExpressionSources = systemSources,
): boolean {
  let ast: Ast;
  try {
    ast = parseExpression(text);
  } catch (error) {
    if (mode === "lenient" && error instanceof AppError) return false;
    throw error;
  }
  return isTruthy(evaluate(ast, scope, { outputsVisible, sources }));
}

class Evaluator {
  constructor(
    private readonly scope: Scope,
    private readonly outputsVisible: boolean,
    readonly sources: ExpressionSources,
  ) {}

  run(ast: Ast): unknown {
    switch (ast.kind) {
      case "literal":
        return ast.value;
      case "path":
        return resolveExpressionPath(ast.path, this.scope, this.outputsVisible);
      case "array":
        return ast.items.map((item) => this.run(item));
      case "call": {
        const fn = FUNCTIONS.get(ast.name);
        return fn ? fn(ast.args.map((arg) => this.run(arg)), this) : null;
      }
      case "not":
        return !isTruthy(this.run(ast.operand));
      case "negate": {
        const number = toNumber(this.run(ast.operand));
        return number === undefined ? null : finiteOrNull(-number);
      }
      case "logical":
        // Short-circuits; the result is a boolean either way (B.2).
        if (ast.operator === "&&") return ast.operands.every((operand) => isTruthy(this.run(operand)));
        return ast.operands.some((operand) => isTruthy(this.run(operand)));
      case "compare":
        return compare(ast.operator, this.run(ast.left), this.run(ast.right));
      case "arithmetic": {
        let value = this.run(ast.first);
        for (const { operator, operand } of ast.rest) value = arithmetic(operator, value, this.run(operand));
        return value;
      }
      case "conditional":
        return isTruthy(this.run(ast.test)) ? this.run(ast.then) : this.run(ast.otherwise);
    }
  }
}

function compare(operator: CompareOperator, left: unknown, right: unknown): boolean {
  switch (operator) {
    case "==":
      return jsonEquals(left, right);
    case "!=":
      return !jsonEquals(left, right);
    case "in":
      return Array.isArray(right) && right.some((item) => jsonEquals(left, item));
    default: {
      const order = ordering(left, right);
      if (order === undefined) return false;
      if (operator === ">") return order > 0;
      if (operator === ">=") return order >= 0;
      if (operator === "<") return order < 0;
      return order <= 0;
    }
  }
}

/**
 * B.2 arithmetic: numeric strings and booleans coerce to numbers; `+` of two strings
 * concatenates; a non-numeric operand or a division by zero is null (and stays null down a chain).
 */
function arithmetic(operator: ArithmeticOperator, left: unknown, right: unknown): unknown {
  if (operator === "+" && typeof left === "string" && typeof right === "string") {
    return left.length + right.length > EXPRESSION_LIMITS.stringLength ? null : left + right;
  }
  const a = toNumber(left);
  const b = toNumber(right);
  if (a === undefined || b === undefined) return null;
  switch (operator) {
    case "+":
      return finiteOrNull(a + b);
    case "-":
      return finiteOrNull(a - b);
    case "*":
      return finiteOrNull(a * b);
    case "/":
      return b === 0 ? null : finiteOrNull(a / b);
  }
}
