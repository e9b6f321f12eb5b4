// The one build of every bundle: `node build.mjs` (npm run build) writes them all into
// logprob_viz/views/static/; `node build.mjs --watch` (npm run dev) rebuilds each on change.
// Each view's CSS becomes a stylesheet of its own next to its script (the Python view loads both);
// the standalone page inlines widget.css itself, so its script drops the CSS import.
import * as esbuild from "esbuild";
import { rows } from "./toolkit/rows.js";

const OUT = "../logprob_viz/views/static";

/** [entry, bundle name, format]: listed once, for build and watch alike. */
export const ENTRIES = rows(`
  logprob/view.js        | widget            | esm
  logprob/standalone.js  | standalone        | iife
  compare/view.js        | compare           | esm
  lens/view.js           | lens              | esm
  guess/view.js          | guess             | esm
  corpus/view.js         | corpus            | esm
  corpus/standalone.js   | corpus_standalone | iife
  fields/view.js         | fields            | esm
  choices/view.js        | choices           | esm
  explorer_host/panel.js | explorer_host     | esm
  explorer_host/note.js  | kernel_note       | esm
  divergence/view.js     | divergence        | esm
  calibration/plot_fit.js | plot_fit         | esm
`);

const watch = process.argv.includes("--watch");

function options([entry, name, format]) {
  return {
    entryPoints: { [name]: entry },
    bundle: true,
    format,
    minify: !watch,
    target: "es2020",
    define: { "define.amd": "false" },
    outdir: OUT,
    loader: format === "iife" ? { ".css": "empty" } : {},
    logLevel: "info",
  };
}

if (watch) {
  for (const entry of ENTRIES) await (await esbuild.context(options(entry))).watch();
} else {
  await Promise.all(ENTRIES.map((entry) => esbuild.build(options(entry))));
}
