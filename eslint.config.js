import js from "@eslint/js";
import tseslint from "typescript-eslint";
import reactHooks from "eslint-plugin-react-hooks";

const TESTS = ["**/*.test.ts"];
const NO_WEB = { group: ["**/server/**", "**/app/**"], message: "the engine knows no web: engine never imports server/ or app/" };
const STORAGE_FRONT_DOOR = {
  group: ["**/storage/*", "!**/storage/index.ts"],
  message: "engine/storage/index.ts is the only way into storage from outside it",
};
const HANDLER_DESCRIPTORS_ONLY = {
  group: ["**/engine/handlers/*", "!**/engine/handlers/descriptors.ts"],
  message: "the web knows handlers by engine/handlers/descriptors.ts, never by their (Node) code",
};
const NO_EVALUATOR = { group: ["**/engine/exec/**"], message: "the web reads instances through the engine's read model, never engine/exec" };

export default tseslint.config(
  { ignores: ["node_modules/", ".next/", ".data/", "server/db/generated/", "test-results/", "playwright-report/", "next-env.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.tsx"],
    plugins: { "react-hooks": reactHooks },
    rules: reactHooks.configs.recommended.rules,
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  // The walls of DESIGN.md, for product code (tests and benchmarks may reach inside to measure).
  {
    files: ["engine/**/*.ts"],
    ignores: ["engine/storage/**", ...TESTS],
    rules: { "no-restricted-imports": ["error", { patterns: [NO_WEB, STORAGE_FRONT_DOOR] }] },
  },
  {
    files: ["engine/storage/**/*.ts"],
    ignores: TESTS,
    rules: { "no-restricted-imports": ["error", { patterns: [NO_WEB] }] },
  },
  {
    files: ["server/**/*.ts"],
    ignores: TESTS,
    rules: { "no-restricted-imports": ["error", { patterns: [STORAGE_FRONT_DOOR, NO_EVALUATOR] }] },
  },
  {
    files: ["app/**/*.ts", "app/**/*.tsx"],
    ignores: TESTS,
    rules: { "no-restricted-imports": ["error", { patterns: [STORAGE_FRONT_DOOR, NO_EVALUATOR, HANDLER_DESCRIPTORS_ONLY] }] },
  },
  // Pages are drawn on the server, then hydrated in the reader's locale: text that says a number or
  // a time in "the" locale differs between the two and hydration fails.
  {
    files: ["app/**/*.ts", "app/**/*.tsx"],
    ignores: [...TESTS, "app/_components/local-time.tsx"],
    rules: {
      "no-restricted-syntax": ["error", {
        selector: "CallExpression[callee.property.name=/^toLocale(Date|Time)?String$/][arguments.length=0]",
        message: 'name the locale (numbers: "en-US") or say times with app/_components/local-time',
      }],
    },
  },
);
