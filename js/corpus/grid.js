// The trace table's column widths: no heading and no label cut, the text column the rest of the row.
// Each row is a grid of its own (the table is virtualised), so the widths are fixed numbers, set as CSS
// variables on the table: --lvx-grid (and --lvx-grid-min) for a wide page, --lvx-grid-narrow for one under
// 900 px (a projector: 1280x720 at 150 % is 853 px), where the columns in NARROW_HIDDEN go. A number column
// is as wide as its heading (measured in the heading's own font, with room for the sort mark); the label
// column (and a corpus of choices' predicted and gold) as wide as its longest texts, up to LABEL_MAX, where
// the row has the room (the text keeps TEXT_MIN);
// a column with nothing known in any row is not drawn.

import { fontFamilyOf, textMeasure } from "../toolkit/measure.js";

const WIDE = { item: 40, tokens: 52, perplexity: 76, mean_logprob: 62, min_logprob: 62, max_surprisal: 72, mean_entropy: 60,
  flags: 44, spark: 72, correct: 48, extra: 76 };
const NARROW = { ...WIDE, item: 32, tokens: 44, perplexity: 68, spark: 56, extra: 68 };
// Under 900 px the text needs the room (it was 137 px wide at 853): the mean and min logprob go (perplexity
// says the same), and the max surprisal and the tokens (the sparkline shows where the surprises are)
export const NARROW_HIDDEN = new Set(["mean_logprob", "min_logprob", "max_surprisal", "tokens"]);
// a corpus of choices on a projector: its answers take the room of the entropy and the sparkline too
const NARROW_HIDDEN_ANSWERS = new Set([...NARROW_HIDDEN, "mean_entropy", "spark"]);
const TEXTS = new Set(["label", "predicted", "gold"]);
const LABEL_MAX = { wide: 280, narrow: 180 }; // px: a longer label is cut (its cell's tooltip has it whole)
const SORT_MARK = 14; // px: " ▼" beside a sorted heading
const GAP = 6; // px: column-gap (corpus.css)
const PADDING = 12; // px: a row's left and right padding
const TEXT_MIN = { wide: 160, narrow: 250 }; // px: the text column's least width (a projector: the text first)

/** Estimated widths before the page's fonts can be measured: [heading px by name, widest text px by column]
 * (`longest`: {label, predicted, gold} -> the texts that can be the widest). */
export function estimate(columns, longest) {
  const heads = {};
  for (const [name, title] of columns) heads[name] = title.length * 8;
  const texts = {};
  for (const [name, values] of Object.entries(longest)) texts[name] = Math.max(0, ...values.map((s) => s.length * 8));
  return [heads, texts];
}

/** [heading px by name, widest text px by column] measured in the fonts of `table` (attached to the page), or null. */
export function measure(table, columns, longest) {
  const head = table.querySelector(".lvx-head .lvx-head-title");
  if (!head || !table.isConnected) return null;
  const headMeasure = textMeasure(getComputedStyle(head).fontFamily);
  const cell = table.querySelector(".lvx-body .lvx-col-label") || head;
  const labelMeasure = regularMeasure(fontFamilyOf(cell.parentElement || table, "lvx-cell lvx-col-label"));
  if (!headMeasure || !labelMeasure) return null;
  const px = (e) => parseFloat(getComputedStyle(e).fontSize) || 13;
  const heads = {};
  for (const [name, title] of columns) heads[name] = headMeasure(title, px(head));
  const texts = {};
  for (const [name, values] of Object.entries(longest)) texts[name] = Math.max(0, ...values.map((s) => labelMeasure(s, px(cell))));
  return [heads, texts];
}

/** measure(text, px) in regular weight (a label cell is never bold), or null without a canvas. */
function regularMeasure(family) {
  const context = document.createElement("canvas").getContext("2d");
  if (!context) return null;
  return (text, px) => {
    context.font = `${px}px ${family}`;
    return context.measureText(text).width;
  };
}

function widthOf(name, heads, texts, size) {
  const base = size === "wide" ? WIDE : NARROW;
  const head = Math.ceil(heads[name] ?? 0) + SORT_MARK;
  if (name === "text") return null;
  // the label: whole where the row has the room, else it gives way before the text does (a grid track
  // between its least and its whole width; the text column keeps TEXT_MIN)
  if (TEXTS.has(name) && texts[name] != null) { // (predicted, gold: a corpus of choices' option texts)
    return [Math.max(48, head), Math.max(48, Math.min(LABEL_MAX[size], Math.ceil(texts[name]) + 2), head)];
  }
  if (TEXTS.has(name)) return [Math.max(48, head), Math.max(size === "wide" ? 100 : 80, head)];
  return Math.max(base[name] ?? base.extra, head);
}

/** Set the table's grid variables for `columns` ([name, title, kind]) from the measured `heads` and `texts`. */
export function applyGrid(el, columns, [heads, texts]) {
  for (const size of ["wide", "narrow"]) {
    const tracks = [];
    let fixed = PADDING;
    const hidden = el.classList.contains("lvx-with-answers") ? NARROW_HIDDEN_ANSWERS : NARROW_HIDDEN;
    for (const [name] of columns) {
      if (size === "narrow" && hidden.has(name)) continue;
      const w = widthOf(name, heads, texts, size);
      if (w == null) tracks.push(`minmax(${TEXT_MIN[size]}px, 1fr)`);
      else tracks.push(Array.isArray(w) ? `minmax(${w[0]}px, ${w[1]}px)` : `${w}px`);
      fixed += (w == null ? TEXT_MIN[size] : Array.isArray(w) ? w[0] : w) + GAP;
    }
    const suffix = size === "wide" ? "" : "-narrow";
    el.style.setProperty(`--lvx-grid${suffix}`, tracks.join(" "));
    el.style.setProperty(`--lvx-grid${suffix}-min`, `${fixed - GAP}px`);
  }
}
