// Tokens to AST: recursive descent, one method per precedence level, lowest first. Every
// nesting construct counts against EXPRESSION_LIMITS.depth, so no input can overflow the stack.
import type { ArithmeticOperator, Ast, CompareOperator } from "./ast.ts";
import { describeToken, isSpace, SyntaxProblem, tokenize, type Token } from "./lexer.ts";
import { EXPRESSION_LIMITS } from "./limits.ts";

const COMPARE_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", ">", ">=", "<", "<="]);

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): Ast {
    const ast = this.ternary();
    const next = this.peek();
    if (next.type !== "end") throw this.unexpected(next);
    return ast;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private isOperator(value: string): boolean {
    const token = this.peek();
    return token.type === "operator" && token.value === value;
  }

  private expect(value: string, message: string) {
    if (!this.isOperator(value)) throw new SyntaxProblem(`${message}, found ${describeToken(this.peek())}`, this.peek().at);
    this.index++;
  }

  private unexpected(token: Token): SyntaxProblem {
    return new SyntaxProblem(`unexpected ${describeToken(token)}`, token.at);
  }

  /** Every nesting construct passes here, so hostile nesting stops long before the stack does. */
  private nested<T>(parse: () => T): T {
    if (++this.depth > EXPRESSION_LIMITS.depth) {
      throw new SyntaxProblem(`expression nests deeper than ${EXPRESSION_LIMITS.depth} levels`, this.peek().at);
    }
    const result = parse();
    this.depth--;
    return result;
  }

  /** `c ? a : b`, lowest precedence; the `:` is mandatory. Branches may nest (right-associative). */
  private ternary(): Ast {
    return this.nested(() => {
      const test = this.or();
      if (!this.isOperator("?")) return test;
      this.index++;
      const then = this.ternary();
      this.expect(":", "expected `:` after the `?` branch");
      const otherwise = this.ternary();
      return { kind: "conditional", test, then, otherwise };
    });
  }

  private or(): Ast {
    return this.logical("||", () => this.and());
  }

  private and(): Ast {
    return this.logical("&&", () => this.comparison());
  }

  private logical(operator: "&&" | "||", operand: () => Ast): Ast {
    const operands = [operand()];
    while (this.isOperator(operator)) {
      this.index++;
      operands.push(operand());
    }
    return operands.length === 1 ? (operands[0] as Ast) : { kind: "logical", operator, operands };
  }

  /** At most one comparison (B.2): `a == b == c` is a syntax error, not a chain. */
  private comparison(): Ast {
    const left = this.additive();
    const operator = comparisonOperator(this.peek());
    if (!operator) return left;
    this.index++;
    const right = this.additive();
    const next = this.peek();
    if (comparisonOperator(next)) throw new SyntaxProblem("only one comparison is allowed here (combine with && or ||)", next.at);
    return { kind: "compare", operator, left, right };
  }

  private additive(): Ast {
    return this.arithmetic(["+", "-"], () => this.multiplicative());
  }

  private multiplicative(): Ast {
    return this.arithmetic(["*", "/"], () => this.unary());
  }

  private arithmetic(operators: readonly ArithmeticOperator[], operand: () => Ast): Ast {
    const first = operand();
    const rest: { operator: ArithmeticOperator; operand: Ast }[] = [];
    for (let token = this.peek(); token.type === "operator" && (operators as readonly string[]).includes(token.value); token = this.peek()) {
      this.index++;
      rest.push({ operator: token.value as ArithmeticOperator, operand: operand() });
    }
    return rest.length === 0 ? first : { kind: "arithmetic", first, rest };
  }

  private unary(): Ast {
    if (this.isOperator("!") || this.isOperator("-")) {
      const kind = this.isOperator("!") ? "not" : "negate";
      this.index++;
      return this.nested(() => ({ kind, operand: this.unary() }));
    }
    return this.primary();
  }

  private primary(): Ast {
    const token = this.peek();
    switch (token.type) {
      case "number":
      case "string":
        this.index++;
        return { kind: "literal", value: token.value };
      case "word": {
        if (token.value === "in") throw this.unexpected(token);
        this.index++;
        if (token.value === "true") return { kind: "literal", value: true };
        if (token.value === "false") return { kind: "literal", value: false };
        if (token.value === "null") return { kind: "literal", value: null };
        if (!this.isOperator("(")) return { kind: "path", path: token.value };
        this.index++;
        return { kind: "call", name: token.value, args: this.list(")") };
      }
      case "operator":
        if (token.value === "(") {
          this.index++;
          const inner = this.ternary();
          this.expect(")", "expected `)`");
          return inner;
        }
        if (token.value === "[") {
          this.index++;
          return { kind: "array", items: this.list("]") };
        }
        throw this.unexpected(token);
      case "end":
        throw this.unexpected(token);
    }
  }

  /** Comma-separated expressions up to `close`; a trailing comma is accepted (as Orch8 does). */
  private list(close: ")" | "]"): Ast[] {
    const items: Ast[] = [];
    while (!this.isOperator(close)) {
      items.push(this.ternary());
      if (this.isOperator(",")) this.index++;
      else if (!this.isOperator(close)) throw new SyntaxProblem(`expected \`,\` or \`${close}\`, found ${describeToken(this.peek())}`, this.peek().at);
    }
    this.index++;
    return items;
  }
}

function comparisonOperator(token: Token): CompareOperator | undefined {
  if (token.type === "operator" && COMPARE_OPERATORS.has(token.value)) return token.value as CompareOperator;
  if (token.type === "word" && token.value === "in") return "in";
  return undefined;
}

/**
 * Text to AST, without the cache; throws SyntaxProblem. A `{{ … }}` wrapper around the entire text
 * is stripped, and empty text is the literal null.
 */
export function parseUncached(text: string): Ast {
  if (text.length > EXPRESSION_LIMITS.length) {
    throw new SyntaxProblem(`expression longer than ${EXPRESSION_LIMITS.length} characters`, EXPRESSION_LIMITS.length);
  }
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text[start] as string)) start++;
  while (end > start && isSpace(text[end - 1] as string)) end--;
  if (end - start >= 4 && text.startsWith("{{", start) && text.endsWith("}}", end)) {
    start += 2;
    end -= 2;
  }
  const tokens = tokenize(text, start, end);
  if (tokens.length === 1) return { kind: "literal", value: null };
  return new Parser(tokens).parse();
}
