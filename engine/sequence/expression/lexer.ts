// Expression text to tokens. A syntax error is thrown as a SyntaxProblem (message and offset),
// which cache.ts turns into the public AppError.
export type Token =
  | { type: "number"; value: number; at: number }
  | { type: "string"; value: string; at: number }
  | { type: "word"; value: string; at: number }
  | { type: "operator"; value: string; at: number }
  | { type: "end"; at: number };

export class SyntaxProblem {
  constructor(readonly message: string, readonly at: number) {}
}

const TWO_CHAR_OPERATORS: ReadonlySet<string> = new Set(["==", "!=", ">=", "<=", "&&", "||"]);
const ONE_CHAR_OPERATORS: ReadonlySet<string> = new Set([">", "<", "!", "+", "-", "*", "/", "(", ")", "[", "]", ",", "?", ":"]);

const isDigit = (code: number) => code >= 48 && code <= 57;
const isWordStart = (code: number) => (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
// `-` is not a word character: `a-b` is a subtraction, so hyphenated names are not addressable.
const isWordPart = (code: number) => isWordStart(code) || isDigit(code) || code === 46;

export function tokenize(text: string, start: number, end: number): Token[] {
  const tokens: Token[] = [];
  let index = start;
  while (index < end) {
    const char = text[index] as string;
    const code = text.charCodeAt(index);
    if (char === " " || char === "\t" || char === "\n" || char === "\r") {
      index++;
    } else if (char === '"' || char === "'") {
      // No escape sequences (B.2): the string ends at the next matching quote.
      const close = text.indexOf(char, index + 1);
      if (close === -1 || close >= end) throw new SyntaxProblem("unterminated string", index);
      tokens.push({ type: "string", value: text.slice(index + 1, close), at: index });
      index = close + 1;
    } else if (isDigit(code)) {
      const from = index;
      while (index < end && isDigit(text.charCodeAt(index))) index++;
      if (index < end && text[index] === ".") {
        index++;
        while (index < end && isDigit(text.charCodeAt(index))) index++;
      }
      const value = Number(text.slice(from, index));
      if (!Number.isFinite(value)) throw new SyntaxProblem("number out of range", from);
      tokens.push({ type: "number", value, at: from });
    } else if (isWordStart(code)) {
      const from = index;
      while (index < end && isWordPart(text.charCodeAt(index))) index++;
      tokens.push({ type: "word", value: text.slice(from, index), at: from });
    } else if (index + 1 < end && TWO_CHAR_OPERATORS.has(text.slice(index, index + 2))) {
      tokens.push({ type: "operator", value: text.slice(index, index + 2), at: index });
      index += 2;
    } else if (ONE_CHAR_OPERATORS.has(char)) {
      tokens.push({ type: "operator", value: char, at: index });
      index++;
    } else if (char === "{" || char === "}") {
      // B.2: braces inside an expression break it (null in lenient mode, an error for `when`).
      throw new SyntaxProblem("`{` and `}` are not allowed inside an expression", index);
    } else {
      const shown = char === "=" ? "`=` (comparison is `==`)" : `character \`${String.fromCodePoint(text.codePointAt(index) ?? code)}\``;
      throw new SyntaxProblem(`unexpected ${shown}`, index);
    }
  }
  tokens.push({ type: "end", at: end });
  return tokens;
}

export function describeToken(token: Token): string {
  switch (token.type) {
    case "end":
      return "end of expression";
    case "string":
      return `string ${JSON.stringify(token.value.length > 40 ? `${token.value.slice(0, 40)}…` : token.value)}`;
    default:
      return `\`${String(token.value)}\``;
  }
}

export const isSpace = (char: string) => char === " " || char === "\t" || char === "\n" || char === "\r";
