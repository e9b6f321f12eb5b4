// Tables written as text, a row per line and "|" between its fields: one reader for the list of
// bundles (build.mjs) and the corpus view's columns (corpus/data.js), which were each an array of
// same-shaped arrays.

/** The rows of `text` (each non-blank line split at "|", each field trimmed), as arrays of strings. */
export function rows(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean)
    .map((line) => line.split("|").map((field) => field.trim()));
}
