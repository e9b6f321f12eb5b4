// The guessing game's pieces of DOM, each built from the traits it shows: the layout, the text
// (context, played tokens, the hidden "?"), the buttons, the chart of one token, the results
// table. Token text goes in through the LogprobView's appendText (whitespace marked the one way,
// always as text, never markup); elements through the toolkit's `h`; numbers through its formats.

import { buildChart } from "../logprob/chart.js";
import { tokenStyle } from "../logprob/modes.js";
import { appendText, breaksBefore, longClass } from "../logprob/text.js";
import { h } from "../toolkit/dom.js";
import { formatPercent } from "../toolkit/format.js";
import { classGuesses, modelGuesses, RESULT_HEADS, rowCells } from "./feedback.js";

const HINT =
  "One token: often a word with its space before it, or a piece of a word. Spaces around a guess do not count; " +
  "an empty guess means a space or a newline.";

/** A button of `className` with plain `text` (never markup). */
function button(className, text, type = "button") {
  const b = h("button", className, text);
  b.type = type;
  return b;
}

/** The game's elements, in page order, as a record of named parts (not yet in the page). */
export function gameLayout() {
  const parts = {
    root: h("div", "lv-root lvg-root"),
    header: h("div", "lvg-header"),
    text: h("div", "lvg-text"),
    form: h("form", "lvg-form"),
    input: h("input", "lvg-input"),
    guess: button("lvg-guess", "Guess", "submit"),
    reveal: button("lvg-reveal", "Reveal"),
    choices: h("div", "lvg-choices"),
    tried: h("div", "lvg-tried"),
    feedback: h("div", "lvg-feedback"),
    hint: h("div", "lvg-hint", HINT),
    chart: h("div", "lvg-chart"),
    results: h("div", "lvg-results"),
  };
  Object.assign(parts.input, { type: "text", placeholder: "the next token\u2026 (Enter)", autocomplete: "off", spellcheck: false });
  parts.input.setAttribute("aria-label", "your guess for the next token");
  parts.feedback.setAttribute("role", "status");
  parts.form.append(parts.input, parts.guess, parts.reveal);
  const { root, header, text, form, choices, tried, feedback, chart, results } = parts;
  root.append(header, text, form, choices, tried, feedback, chart, results); // (the hint: in the chart's room until a token is played)
  return parts;
}

/** Token text as a chip, optionally in a token's colours (`style` from tokenStyle). */
export function chip(text, style) {
  const c = h("span", "lv-chip");
  appendText(c, text);
  if (style) Object.assign(c.style, { background: style.background, color: style.color });
  return c;
}

/** How a played row was settled, class beside model, for a tooltip and the chart's heading. */
const settled = (row) => {
  const guesses = `${classGuesses(row)} guess${row.class_guesses === 1 && !row.revealed ? "" : "es"}`;
  return `${row.revealed ? "revealed" : "found"}: class ${guesses}, model ${modelGuesses(row)} (its rank)`;
};

/**
 * The text's spans: the context before `start` plain, each played token in the model's colour
 * (`sc`) with what the class did as its tooltip, the hidden next token as "?" while `playing`.
 */
export function textSpans(data, { start, rowAt, sc, pinned, playing }) {
  const spans = [];
  for (let i = 0; i < data.n; i++) {
    const played = i >= start;
    const span = h("span", `lv-token lvg-token ${played ? "lvg-played" : "lvg-context"}${longClass(data.tokens[i])}`);
    span.setAttribute("data-index", String(i));
    appendText(span, data.tokens[i]);
    const row = played ? rowAt(i) : null;
    if (played) {
      const style = tokenStyle(sc, data, i);
      if (style) span.style.cssText = `background:${style.background};color:${style.color}`;
    }
    if (row) {
      span.title = `token ${row.token} ${settled(row)} \u00b7 model p ${formatPercent(row.model_prob)}`;
      if (row.revealed) span.classList.add("lvg-was-revealed");
    }
    if (i === pinned) span.classList.add("lv-pinned");
    if (breaksBefore(data.tokens[i], i)) spans.push(h("wbr")); // a line breaks before the token's space, not after it
    spans.push(span);
  }
  if (playing) spans.push(h("span", "lvg-hidden", "?"));
  return spans;
}

/** One button per choice; `onPick(text)` when one is pressed. */
export function choiceButtons(choices, onPick) {
  return choices.map((choice) => {
    const b = button("lvg-choice", null);
    appendText(b, choice);
    b.addEventListener("click", () => onPick(choice));
    return b;
  });
}

/** "tried: a b c" for the wrong guesses at this position; nothing before the first. */
export function triedParts(tried) {
  return tried.length ? [h("span", "lvg-label", "tried: "), ...tried.map((g) => chip(g))] : [];
}

/**
 * Token i's alternatives chart (the LogprobView's), headed by where it is in the game and,
 * when it was played, the guesses the class made there.
 */
export function tokenChart(data, i, { row, nTokens, sc }) {
  const chart = buildChart(data, i, { promptLen: data.promptLen, showIds: false, style: tokenStyle(sc, data, i), pinned: false });
  const where = chart.querySelector(".lv-chart-where");
  if (where) where.textContent = `token ${i + 1} of ${nTokens} \u00b7 ${row ? settled(row) : "shown at the start"}`;
  if (row && row.guesses.length) {
    const line = h("div", "lvg-chart-guesses", "the class guessed: ");
    row.guesses.forEach((g) => line.append(chip(g)));
    chart.appendChild(line);
  }
  return chart;
}

/** The results table: one line per played token (numbered from 1, as the header and chart are). */
export function resultsTable(rows) {
  const table = h("table", "lvg-table");
  const head = h("tr");
  for (const name of RESULT_HEADS) head.append(h("th", null, name));
  table.append(head);
  for (const row of rows) {
    const tr = h("tr");
    const text = h("td");
    text.append(chip(row.text));
    tr.append(h("td", null, String(row.token)), text);
    for (const value of rowCells(row)) tr.append(h("td", null, value));
    table.append(tr);
  }
  return table;
}
