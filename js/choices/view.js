// The choices view's bars (anywidget): a row per prompt, a bar per option as long as its
// probability, in the views' palette. Clicking a bar sets `selected_row` / `selected_option`; the
// kernel shows that option's tokens in the LogprobView below and confirms through `_shown`;
// without a kernel (a saved notebook) the view says that one is needed. Text goes in with
// textContent only: prompts and options are data.

import "./choices.css";
import { ask } from "../toolkit/ask.js";
import { paletteColor, rgb } from "../toolkit/colors.js";
import { h } from "../toolkit/dom.js";
import { visible } from "../toolkit/whitespace.js";
import { barWords, decodeChoices, predictedOption, promptTail } from "./data.js";

function optionBar(data, r, j, onPick) {
  const words = barWords(data, r, j);
  const bar = h("button", "lvch-bar");
  bar.type = "button";
  bar.dataset.row = String(r);
  bar.dataset.option = String(j);
  bar.title = words.title;
  const label = h("span", "lvch-option", visible(data.option(r, j)));
  const track = h("span", "lvch-track");
  const fill = h("span", "lvch-fill");
  const p = data.prob(r, j);
  fill.style.width = `${Math.max(0, Math.min(1, p)) * 100}%`;
  fill.style.background = rgb(paletteColor("viridis", p));
  track.appendChild(fill);
  const pct = h("span", "lvch-pct", words.percent);
  const marks = h("span", "lvch-marks");
  if (data.gold[r] === j) marks.appendChild(h("span", "lvch-mark lvch-gold", "gold"));
  else if (data.gold[r] >= 0 && predictedOption(data, r) === j) marks.appendChild(h("span", "lvch-mark lvch-wrong", "predicted"));
  if (data.flagged(r, j)) marks.appendChild(h("span", "lvch-mark lvch-flag", "flag"));
  bar.append(label, track, pct, marks);
  bar.addEventListener("click", () => onPick(r, j));
  return bar;
}

function render({ model, el }) {
  const root = h("div", "lvch-root");
  el.appendChild(root);
  const data = decodeChoices(model.get("_payload"));
  const head = h("div", "lvch-head");
  const right = data.gold.filter((g, r) => g >= 0 && predictedOption(data, r) === g).length;
  const withGold = data.gold.filter((g) => g >= 0).length;
  head.textContent = `${data.nRows} prompt${data.nRows === 1 ? "" : "s"} × ${data.nOptions} options` +
    (withGold ? ` · ${right} of ${withGold} right` : "") + ` · probability from the logprob ${data.length.replace("_", " ")}`;
  const list = h("div", "lvch-list");
  const note = h("div", "lvch-note");
  root.append(head, list, note);
  let answered = () => {}; // stops the wait for the kernel's `_shown`

  const pick = (r, j) => {
    answered();
    answered = ask(model, { traits: { selected_row: r, selected_option: j } }, {
      noAnswer: () => {
        const shown = model.get("_shown") || [];
        if (shown[0] !== r || shown[1] !== j) note.textContent = "No kernel answered: run the notebook's cells to see this option's tokens.";
      },
    });
  };
  for (let r = 0; r < data.nRows; r++) {
    const row = h("div", "lvch-row");
    if (data.nRows > 1 || data.prompts[r]) row.appendChild(h("div", "lvch-prompt", promptTail(data.prompts[r])));
    for (let j = 0; j < data.nOptions; j++) row.appendChild(optionBar(data, r, j, pick));
    list.appendChild(row);
  }
  const mark = () => {
    const r = model.get("selected_row");
    const j = model.get("selected_option");
    for (const bar of list.querySelectorAll(".lvch-bar")) {
      const on = Number(bar.dataset.row) === r && Number(bar.dataset.option) === j;
      bar.classList.toggle("lvch-selected", on);
      bar.setAttribute("aria-pressed", on ? "true" : "false");
    }
  };
  const shown = () => {
    const [r, j] = model.get("_shown") || [];
    if (r === model.get("selected_row") && j === model.get("selected_option")) {
      note.textContent = "";
      answered();
    }
  };
  model.on("change:selected_row", mark);
  model.on("change:selected_option", mark);
  model.on("change:_shown", shown);
  mark();
  return () => {
    answered();
    model.off("change:selected_row", mark);
    model.off("change:selected_option", mark);
    model.off("change:_shown", shown);
  };
}

export default { render };
