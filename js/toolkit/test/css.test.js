// Rules the stylesheets keep (`npm test`): read as text, every view's CSS at once.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const JS = new URL("../..", import.meta.url).pathname;
const sheets = () =>
  readdirSync(JS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== "node_modules")
    .flatMap((d) => readdirSync(join(JS, d.name)).filter((f) => f.endsWith(".css")).map((f) => join(d.name, f)));

/** [selector, body] of each innermost rule of a stylesheet, comments removed. */
const rules = (css) =>
  [...css.replace(/\/\*[\s\S]*?\*\//g, "").matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => [m[1].trim(), m[2]]);

// theme.css sets box-sizing on elements only (a rule naming *::before and *::after made the browser
// resolve both pseudo-elements' styles for every element); that is right while no pseudo-element
// of ours has a size, a padding or a border, which box-sizing would change.
test("no ::before or ::after rule sets a size, a padding or a border", () => {
  const found = sheets();
  assert.ok(found.includes("toolkit/theme.css") && found.includes("logprob/widget.css"), found.join(", "));
  const bad = [];
  for (const file of found) {
    for (const [selector, body] of rules(readFileSync(join(JS, file), "utf8"))) {
      if (!/::?(before|after)\b/.test(selector)) continue;
      const props = body.split(";").map((d) => d.split(":")[0].trim());
      const boxed = props.filter((p) => /^(width|height|min-width|min-height|max-width|max-height|padding|border)(-|$)/.test(p));
      if (boxed.length) bad.push(`${file}: ${selector.replace(/\s+/g, " ")} { ${boxed.join(", ")} }`);
    }
  }
  assert.deepEqual(bad, [], "give these box-sizing: border-box themselves, or theme.css's rule its pseudo-elements back");
  // (and the rule itself: the pseudo-elements are not named, every view's root is)
  const theme = rules(readFileSync(join(JS, "toolkit/theme.css"), "utf8"));
  const boxSizing = theme.filter(([, body]) => /box-sizing:\s*border-box/.test(body)).map(([s]) => s);
  assert.ok(boxSizing.some((s) => s.includes(".lv-root *")), boxSizing.join(" | "));
  assert.ok(boxSizing.every((s) => !/::?(before|after)/.test(s)), boxSizing.join(" | "));
});
