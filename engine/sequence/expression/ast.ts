// The parsed form of an expression, built by parser.ts and walked by evaluate.ts.

export type CompareOperator = "==" | "!=" | ">" | ">=" | "<" | "<=" | "in";
export type ArithmeticOperator = "+" | "-" | "*" | "/";

/** Chains of one precedence level are n-ary nodes, so `a || b || …` adds no depth. */
export type Ast =
  | { readonly kind: "literal"; readonly value: string | number | boolean | null }
  | { readonly kind: "path"; readonly path: string }
  | { readonly kind: "array"; readonly items: readonly Ast[] }
  | { readonly kind: "call"; readonly name: string; readonly args: readonly Ast[] }
  | { readonly kind: "not"; readonly operand: Ast }
  | { readonly kind: "negate"; readonly operand: Ast }
  | { readonly kind: "logical"; readonly operator: "&&" | "||"; readonly operands: readonly Ast[] }
  | { readonly kind: "compare"; readonly operator: CompareOperator; readonly left: Ast; readonly right: Ast }
  | { readonly kind: "arithmetic"; readonly first: Ast; readonly rest: readonly { readonly operator: ArithmeticOperator; readonly operand: Ast }[] }
  | { readonly kind: "conditional"; readonly test: Ast; readonly then: Ast; readonly otherwise: Ast };
