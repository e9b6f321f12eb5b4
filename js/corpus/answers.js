// A corpus of choices (Choices.to_corpus): each item's predicted and gold option and whether it was
// right, as three more table columns that sort and filter. Kept apart from the table's own columns:
// a corpus without them (the usual one) reads and shows nothing of this. No DOM but the filter bar's.

import { readArray, readTexts } from "../toolkit/codec.js";
import { h, select } from "../toolkit/dom.js";

/** [name, title, kind] of the answer columns; "correct" holds 1 right, 0 wrong, 255 unknown. */
export const ANSWER_COLUMNS = [
  ["predicted", "predicted", "text"],
  ["gold", "gold", "text"],
  ["correct", "right?", "int"],
];

/** Add the payload's answer columns (views/corpus/payload.py `encode_answers`) to `columns`; whether there were any. */
export function readAnswers(payload, columns, n) {
  const answers = payload.answers;
  if (!answers) return false;
  columns.predicted = readTexts(answers.predicted, "answers.predicted");
  columns.gold = readTexts(answers.gold, "answers.gold");
  columns.correct = readArray(answers.correct, "answers.correct");
  for (const [name] of ANSWER_COLUMNS) {
    if (columns[name].length !== n) throw new RangeError(`corpus payload answers.${name} has ${columns[name].length} values, expected ${n}`);
  }
  return true;
}

/** The words of an answer cell. */
export function answerText(columns, row, name) {
  if (name !== "correct") return columns[name][row];
  const v = columns.correct[row];
  return v === 1 ? "right" : v === 0 ? "wrong" : "";
}

/** A row test for the answer filters: predicted contains `predicted` (case-insensitive), correct is right / wrong. */
export function answerTest(columns, filters, lower) {
  const predicted = (filters.predicted || "").toLowerCase();
  const want = filters.correct === "right" ? 1 : filters.correct === "wrong" ? 0 : -1;
  if (!columns.predicted || (!predicted && want < 0)) return null;
  if (predicted && !lower.predicted) lower.predicted = columns.predicted.map((s) => s.toLowerCase());
  return (i) => (want < 0 || columns.correct[i] === want) && (!predicted || lower.predicted[i].includes(predicted));
}

/** The filter bar's answer controls: {els, read()} (read gives the two filter values). */
export function answerFilters(filters, onChange) {
  const input = h("input", "lvx-filter lvx-f-predicted");
  input.type = "text";
  input.placeholder = "predicted contains";
  input.setAttribute("aria-label", "predicted contains");
  input.value = filters.predicted || "";
  input.addEventListener("input", onChange);
  const right = select([["", "right and wrong"], ["right", "right only"], ["wrong", "wrong only"]],
    filters.correct || "", "lvx-f-correct", onChange);
  right.setAttribute("aria-label", "right or wrong");
  return { els: [input, right], read: () => ({ predicted: input.value, correct: right.value }) };
}
