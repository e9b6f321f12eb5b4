// The guessing game (anywidget): the text up to the token being guessed, a box to type the next
// token (Enter submits), a few buttons to pick from, Reveal; after each token the model's
// alternatives chart there; at the end the results table. Guesses go to the kernel as custom
// messages ({type: "guess", text} / {type: "reveal"}); everything shown comes from the traits,
// so a saved notebook shows where the game was. Token text is inserted as text, never as HTML.
//
// One `GuessRender` per output holds what that output shows; its pieces of DOM are parts.js,
// its words feedback.js.

import "../logprob/widget.css";
import "./guess.css";
import { scale } from "../logprob/modes.js";
import { decodePayload } from "../logprob/trace_data.js";
import { h } from "../toolkit/dom.js";
import { feedbackParts, progressText, summaryText } from "./feedback.js";
import { choiceButtons, chip, gameLayout, resultsTable, textSpans, tokenChart, triedParts } from "./parts.js";

const NO_KERNEL_MS = 6000; // no change of state this long after a guess: say the kernel is not answering
const TRAITS = "change:_payload change:guesses change:last change:rows change:position";

/** One output of the game: its text, controls, feedback, chart and results. */
export class GuessRender {
  constructor(model, el) {
    this.model = model;
    this.el = gameLayout();
    el.appendChild(this.el.root);
    this.sc = scale("probability", "viridis"); // the played tokens in the view's default colours
    this.data = null; // the TraceData of the tokens shown so far
    this.chartAt = -1; // the token whose chart is shown
    this.waiting = null; // the timer of a guess sent and not answered yet
  }

  rows() {
    return this.model.get("rows") || [];
  }

  rowAt(i) {
    return this.rows().find((r) => r.position === i);
  }

  /** The position of the last token found or revealed; -1 before the first. */
  lastPlayed() {
    const rows = this.rows();
    return rows.length ? rows[rows.length - 1].position : -1;
  }

  done() {
    return this.model.get("position") >= this.model.get("n_tokens");
  }

  /** Send a guess or a reveal; say so when no kernel answers (a saved notebook, a kernel gone). */
  send(content) {
    try {
      this.model.send(content);
    } catch {
      // a view restored from a saved notebook's state has no comm to send on
      this.showMessage("No kernel: run the notebook's cells (lv.guess) to play.");
      return;
    }
    clearTimeout(this.waiting);
    this.el.root.classList.add("lvg-waiting");
    this.waiting = setTimeout(() => {
      this.el.root.classList.remove("lvg-waiting");
      this.showMessage("No answer from the kernel: run the notebook's cells (lv.guess) to play.");
    }, NO_KERNEL_MS);
  }

  answered() {
    clearTimeout(this.waiting);
    this.waiting = null;
    this.el.root.classList.remove("lvg-waiting");
  }

  showMessage(text) {
    this.el.feedback.replaceChildren(h("span", "lv-error", text));
  }

  buildText() {
    const shown = { start: this.model.get("start"), rowAt: (i) => this.rowAt(i), sc: this.sc, pinned: this.chartAt, playing: !this.done() };
    this.el.text.replaceChildren(...textSpans(this.data, shown));
  }

  buildChoices() {
    this.el.choices.replaceChildren(...choiceButtons(this.model.get("choices") || [], (text) => this.send({ type: "guess", text })));
    this.el.tried.replaceChildren(...triedParts(this.model.get("guesses") || []));
  }

  buildFeedback() {
    const parts = feedbackParts(this.model.get("last"), this.rows());
    this.el.feedback.replaceChildren(...parts.map((p) => (p.token != null ? chip(p.token) : document.createTextNode(p.text))));
  }

  /** Show token i's chart (and mark it in the text); -1 or a token not shown: no chart. */
  showChart(i) {
    this.chartAt = i;
    for (const s of this.el.text.querySelectorAll(".lv-pinned")) s.classList.remove("lv-pinned");
    if (i < 0 || !this.data || i >= this.data.n) {
      this.el.chart.replaceChildren();
      return;
    }
    this.el.text.querySelector(`[data-index='${i}']`)?.classList.add("lv-pinned");
    this.el.chart.replaceChildren(tokenChart(this.data, i, { row: this.rowAt(i), nTokens: this.model.get("n_tokens"), sc: this.sc }));
  }

  buildResults() {
    if (!this.done()) this.el.results.replaceChildren();
    else this.el.results.replaceChildren(h("div", "lvg-summary", summaryText(this.model.get("stats"))), resultsTable(this.rows()));
  }

  /** Everything again from the traits: the kernel answered (or the view opened). */
  update() {
    this.answered();
    this.data = decodePayload(this.model.get("_payload"));
    this.el.header.textContent = progressText(this.model.get("position"), this.model.get("n_tokens"), this.model.get("stats"));
    const last = this.model.get("last");
    // After a token is found or revealed its chart opens; a wrong guess leaves the chart as it was.
    if (last && (last.correct || last.guess == null)) this.chartAt = this.lastPlayed();
    this.buildText();
    this.buildChoices();
    this.buildFeedback();
    this.showChart(this.chartAt);
    this.buildResults();
    const over = this.done();
    for (const control of [this.el.input, this.el.guess, this.el.reveal]) control.disabled = over;
    this.el.form.classList.toggle("lvg-over", over);
    this.el.hint.hidden = over || this.rows().length > 0; // said once, before the first token: then room for the chart
  }

  /** Listen to the controls, the text and the kernel; build; return the cleanup. */
  start() {
    const { form, input, reveal, text } = this.el;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (this.done()) return;
      this.send({ type: "guess", text: input.value });
      input.value = "";
    });
    // Keys typed in the box are the game's, not the notebook's shortcuts (Shift+Enter, a, b, d d...).
    input.addEventListener("keydown", (event) => event.stopPropagation());
    reveal.addEventListener("click", () => this.send({ type: "reveal" }));
    text.addEventListener("click", (event) => {
      const span = event.target.closest("[data-index]");
      if (span) this.showChart(Number(span.getAttribute("data-index")));
    });
    const onChange = () => this.update();
    const onMessage = (msg) => {
      if (msg && msg.type === "error") {
        this.answered();
        this.showMessage(msg.message);
      }
    };
    this.model.on(TRAITS, onChange);
    this.model.on("msg:custom", onMessage);
    this.update();
    if (this.model.get("last")) this.showChart(this.lastPlayed()); // a reopened game: its last token's chart
    return () => {
      clearTimeout(this.waiting);
      this.model.off(TRAITS, onChange);
      this.model.off("msg:custom", onMessage);
    };
  }
}

function render({ model, el }) {
  return new GuessRender(model, el).start();
}

export default { render };
