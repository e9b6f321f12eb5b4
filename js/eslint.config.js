// ESLint (flat config) for the frontend: `npm run lint`. The recommended rules plus a few that
// catch what bites a widget: unused code, `==`, `var`, and innerHTML (token text is
// data, never markup: it goes in with textContent); and small pieces: no function over 60
// lines, no module over 400 (tests are exempt: a table of cases may run long).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/**"] },
  js.configs.recommended,
  {
    files: ["**/*.js", "**/*.mjs"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: { ...globals.browser },
    },
    rules: {
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-unused-vars": ["error", { args: "after-used", argsIgnorePattern: "^_", caughtErrors: "none" }],
      "no-var": "error",
      "prefer-const": "error",
      "no-restricted-properties": [
        "error",
        { property: "innerHTML", message: "token text is data: use textContent or text nodes" },
        { property: "outerHTML", message: "token text is data: use textContent or text nodes" },
        { property: "insertAdjacentHTML", message: "token text is data: use textContent or text nodes" },
      ],
      "max-lines-per-function": ["error", { max: 60, skipBlankLines: true, skipComments: true }],
      "max-lines": ["error", { max: 400 }],
    },
  },
  {
    files: ["**/test/**/*.js", "eslint.config.js", "build.mjs"],
    languageOptions: { globals: { ...globals.node } },
    rules: { "max-lines-per-function": "off", "max-lines": "off" },
  },
];
