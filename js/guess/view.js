// The guessing game (anywidget): the text up to the token being guessed, a box to type the next
// token (Enter submits), a few buttons to pick from, Reveal; after each token the model's
// alternatives chart there; at the end the results table. Guesses go to the kernel as custom
// messages ({type: "guess", text} / {type: "reveal"}); everything shown comes from the traits,
// so a saved notebook shows where the game was. Token text is inserted as text, never as HTML.

import "../logprob/widget.css";
import "./guess.css";
import { buildChart } from "../logprob/chart.js";
import { scale, tokenStyle } from "../logprob/modes.js";
import { decodePayload } from "../logprob/trace_data.js";
import { appendText } from "../logprob/text.js";
import { h } from "../toolkit/dom.js";
import { feedbackParts, progressText, RESULT_HEADS, rowCells, summaryText } from "./feedback.js";

const NO_KERNEL_MS = 6000; // no change of state this long after a guess: say the kernel is not answering

function render({ model, el }) {
  const root = h("div", "lv-root lvg-root");
  const header = h("div", "lvg-header");
  const textEl = h("div", "lvg-text");
  const form = h("form", "lvg-form");
  const input = h("input", "lvg-input");
  Object.assign(input, { type: "text", placeholder: "the next token\u2026 (Enter)", autocomplete: "off", spellcheck: false });
  input.setAttribute("aria-label", "your guess for the next token");
  const guessBtn = h("button", "lvg-guess", "Guess");
  guessBtn.type = "submit";
  const revealBtn = h("button", "lvg-reveal", "Reveal");
  revealBtn.type = "button";
  form.append(input, guessBtn, revealBtn);
  const choicesEl = h("div", "lvg-choices");
  const triedEl = h("div", "lvg-tried");
  const feedback = h("div", "lvg-feedback");
  feedback.setAttribute("role", "status");
  const chartEl = h("div", "lvg-chart");
  const resultsEl = h("div", "lvg-results");
  const hint = h("div", "lvg-hint", "One token: often a word with its space before it, or a piece of a word. Spaces around a guess do not count; an empty guess means a space or a newline.");
  root.append(header, textEl, form, choicesEl, triedEl, feedback, hint, chartEl, resultsEl);
  el.appendChild(root);

  const sc = scale("probability", "viridis");
  let data = null;
  let chartAt = -1; // the token whose chart is shown
  let waiting = null; // the timer of a guess sent and not answered yet

  const rows = () => model.get("rows") || [];
  const rowAt = (i) => rows().find((r) => r.position === i);
  const done = () => model.get("position") >= model.get("n_tokens");

  function send(content) {
    try {
      model.send(content);
    } catch {
      // a view restored from a saved notebook's state has no comm to send on
      showMessage("No kernel: run the notebook's cells (lv.guess) to play.");
      return;
    }
    clearTimeout(waiting);
    root.classList.add("lvg-waiting");
    waiting = setTimeout(() => {
      root.classList.remove("lvg-waiting");
      showMessage("No answer from the kernel: run the notebook's cells (lv.guess) to play.");
    }, NO_KERNEL_MS);
  }

  function answered() {
    clearTimeout(waiting);
    waiting = null;
    root.classList.remove("lvg-waiting");
  }

  function showMessage(text) {
    feedback.replaceChildren(h("span", "lv-error", text));
  }

  function chip(text, style) {
    const c = h("span", "lv-chip");
    appendText(c, text);
    if (style) Object.assign(c.style, { background: style.background, color: style.color });
    return c;
  }

  function buildText() {
    const start = model.get("start");
    const spans = [];
    for (let i = 0; i < data.n; i++) {
      const revealed = i >= start;
      const span = h("span", `lv-token lvg-token ${revealed ? "lvg-played" : "lvg-context"}`);
      span.setAttribute("data-index", String(i));
      appendText(span, data.tokens[i]);
      const row = revealed ? rowAt(i) : null;
      if (revealed) {
        const style = tokenStyle(sc, data, i);
        if (style) span.style.cssText = `background:${style.background};color:${style.color}`;
        if (row) span.title = `${row.revealed ? "revealed" : `found in ${row.n_guesses}`} \u00b7 model p ${(row.model_prob * 100).toFixed(1)}%, rank ${row.model_rank}`;
        if (row && row.revealed) span.classList.add("lvg-was-revealed");
      }
      if (i === chartAt) span.classList.add("lv-pinned");
      spans.push(span);
    }
    if (!done()) spans.push(h("span", "lvg-hidden", "?"));
    textEl.replaceChildren(...spans);
  }

  function buildChoices() {
    const buttons = (model.get("choices") || []).map((choice) => {
      const b = h("button", "lvg-choice");
      b.type = "button";
      appendText(b, choice);
      b.addEventListener("click", () => send({ type: "guess", text: choice }));
      return b;
    });
    choicesEl.replaceChildren(...buttons);
    const tried = model.get("guesses") || [];
    triedEl.replaceChildren();
    if (tried.length) {
      triedEl.append(h("span", "lvg-label", "tried: "));
      for (const g of tried) triedEl.append(chip(g));
    }
  }

  function buildFeedback() {
    const parts = feedbackParts(model.get("last"), rows());
    feedback.replaceChildren(...parts.map((p) => (p.token != null ? chip(p.token) : document.createTextNode(p.text))));
  }

  function showChart(i) {
    chartAt = i;
    for (const s of textEl.querySelectorAll(".lv-pinned")) s.classList.remove("lv-pinned");
    if (i < 0 || !data || i >= data.n) {
      chartEl.replaceChildren();
      return;
    }
    textEl.querySelector(`[data-index='${i}']`)?.classList.add("lv-pinned");
    const chart = buildChart(data, i, { promptLen: data.promptLen, showIds: false, style: tokenStyle(sc, data, i), pinned: false });
    const where = chart.querySelector(".lv-chart-where");
    const row = rowAt(i);
    if (where) where.textContent = `token ${i + 1} of ${model.get("n_tokens")}${row ? (row.revealed ? " \u00b7 revealed" : ` \u00b7 found in ${row.n_guesses}`) : " \u00b7 shown at the start"}`;
    if (row && row.guesses.length) {
      const line = h("div", "lvg-chart-guesses", "the class guessed: ");
      row.guesses.forEach((g) => line.append(chip(g)));
      chart.appendChild(line);
    }
    chartEl.replaceChildren(chart);
  }

  function buildResults() {
    if (!done()) {
      resultsEl.replaceChildren();
      return;
    }
    const table = h("table", "lvg-table");
    const head = h("tr");
    for (const name of RESULT_HEADS) head.append(h("th", null, name));
    table.append(head);
    for (const row of rows()) {
      const tr = h("tr");
      tr.append(h("td", null, String(row.position + 1)));
      const cell = h("td");
      cell.append(chip(row.token));
      tr.append(cell);
      for (const value of rowCells(row)) tr.append(h("td", null, value));
      table.append(tr);
    }
    resultsEl.replaceChildren(h("div", "lvg-summary", summaryText(model.get("stats"))), table);
  }

  function update() {
    answered();
    data = decodePayload(model.get("_payload"));
    header.textContent = progressText(model.get("position"), model.get("n_tokens"), model.get("stats"));
    const last = model.get("last");
    const lastPlayed = rows().length ? rows()[rows().length - 1].position : -1;
    // After a token is found or revealed its chart opens; a wrong guess leaves the chart as it was.
    if (last && (last.correct || last.guess == null)) chartAt = lastPlayed;
    buildText();
    buildChoices();
    buildFeedback();
    showChart(chartAt);
    buildResults();
    const over = done();
    for (const control of [input, guessBtn, revealBtn]) control.disabled = over;
    form.classList.toggle("lvg-over", over);
    hint.hidden = over || rows().length > 0; // said once, before the first token: then room for the chart
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (done()) return;
    send({ type: "guess", text: input.value });
    input.value = "";
  });
  // Keys typed in the box are the game's, not the notebook's shortcuts (Shift+Enter, a, b, d d...).
  input.addEventListener("keydown", (event) => event.stopPropagation());
  revealBtn.addEventListener("click", () => send({ type: "reveal" }));
  textEl.addEventListener("click", (event) => {
    const span = event.target.closest("[data-index]");
    if (span) showChart(Number(span.getAttribute("data-index")));
  });
  const onMessage = (msg) => {
    if (msg && msg.type === "error") {
      answered();
      showMessage(msg.message);
    }
  };
  const traits = "change:_payload change:guesses change:last change:rows change:position";
  model.on(traits, update);
  model.on("msg:custom", onMessage);
  update();
  if (model.get("last")) chartAt = rows().length ? rows()[rows().length - 1].position : -1;
  showChart(chartAt);
  return () => {
    clearTimeout(waiting);
    model.off(traits, update);
    model.off("msg:custom", onMessage);
  };
}

export default { render };
