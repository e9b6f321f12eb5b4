// ESLint (flat config) for the frontend: `npm run lint`. The recommended rules plus a few that
// catch what bites a widget: unused code, `==`, `var`, and innerHTML (token text is
// data, never markup: it goes in with textContent).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/**"] },
  js.configs.recommended,
  {
    files: ["**/*.js"],
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
    },
  },
  {
    files: ["test/**/*.js", "eslint.config.js"],
    languageOptions: { globals: { ...globals.node } },
  },
];
