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
import { panelEstimate } from "../logprob/chart.js";
import { scale } from "../logprob/modes.js";
import { decodePayload } from "../logprob/trace_data.js";
import { ask } from "../toolkit/ask.js";
import { h } from "../toolkit/dom.js";
import { feedbackParts, progressText, summaryText } from "./feedback.js";
import { choiceButtons, chip, gameLayout, resultsTable, textSpans, tokenChart, triedParts } from "./parts.js";

const MAX_TEXT_LINES = 6; // the text's box is never taller: a longer text scrolls inside it, to the "?"
const ROOM_FOR_WRAPS = 1.15; // words wrap before the line is full: room for 15 % more characters
const HIDDEN_BOX_CHARS = 3; // the "?" box of the token to guess is about 3 characters wide
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
    this.waiting = null; // stops the wait for the answer to a guess sent (toolkit/ask.js)
    this.textWidth = 0; // the text box's width its height was reserved for
    this.room = new Map(); // element -> the tallest it has been: the buttons' row and the chart never shrink
  }

  /**
   * Keep the text box as tall as the whole text will be (from its length, `text_shape`: the
   * characters are not on the page), at most MAX_TEXT_LINES: a token found never pushes the box to
   * type in, the buttons or the page down. The text is monospace: a character's width says how many
   * fit on a line.
   */
  reserveText() {
    const box = this.el.text;
    const shape = this.model.get("text_shape") || {};
    const width = box.clientWidth;
    if (!width || !shape.chars || width === this.textWidth) return;
    this.textWidth = width;
    const probe = h("span", null, "0".repeat(20));
    box.appendChild(probe);
    const perLine = Math.max(1, Math.floor(width / (probe.getBoundingClientRect().width / 20)));
    probe.remove();
    const lineHeight = parseFloat(getComputedStyle(box).lineHeight);
    const lines = Math.ceil((shape.chars * ROOM_FOR_WRAPS + HIDDEN_BOX_CHARS) / perLine) + shape.lines;
    box.style.height = `${Math.min(lines, MAX_TEXT_LINES) * lineHeight}px`;
  }

  /** `el` keeps the tallest height it has had, at least `least` px: what is below it never moves up. */
  keepRoom(el, least = 0) {
    const before = this.room.get(el) || 0;
    const room = Math.max(before, least, el.offsetHeight);
    if (room !== before) this.room.set(el, room), (el.style.minHeight = `${room}px`);
  }

  /** The chart's room: the tallest chart so far, from the start room for K alternatives. */
  keepChartRoom() {
    this.keepRoom(this.el.chart, this.data ? panelEstimate(this.data) : 0);
  }

  rows() {
    return this.model.get("rows") || [];
  }

  /** The played row of the token at index i (rows number tokens from 1). */
  rowAt(i) {
    return this.rows().find((r) => r.token === i + 1);
  }

  /** The index of the last token found or revealed; -1 before the first. */
  lastPlayed() {
    const rows = this.rows();
    return rows.length ? rows[rows.length - 1].token - 1 : -1;
  }

  done() {
    return this.model.get("position") >= this.model.get("n_tokens");
  }

  /** Send a guess or a reveal; say so when no kernel answers (a saved notebook, a kernel gone). */
  send(content) {
    this.waiting?.();
    this.el.root.classList.add("lvg-waiting");
    this.waiting = ask(this.model, { message: content }, {
      noAnswer: (why) => {
        this.el.root.classList.remove("lvg-waiting");
        // unsent: a view restored from a saved notebook's state has no comm to send on
        this.showMessage(why === "unsent" ? "No kernel: run the notebook's cells (lv.guess) to play."
          : "No answer from the kernel: run the notebook's cells (lv.guess) to play.");
      },
    });
  }

  answered() {
    this.waiting?.();
    this.waiting = null;
    this.el.root.classList.remove("lvg-waiting");
  }

  showMessage(text) {
    this.el.feedback.replaceChildren(h("span", "lv-error", text));
  }

  buildText() {
    const shown = { start: this.model.get("start"), rowAt: (i) => this.rowAt(i), sc: this.sc, pinned: this.chartAt, playing: !this.done() };
    this.el.text.replaceChildren(...textSpans(this.data, shown));
    const box = this.el.text;
    if (box.scrollHeight > box.clientHeight) box.scrollTop = box.scrollHeight; // a long text: its end, the "?", in view
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
      this.el.chart.replaceChildren(this.el.hint); // before the first token: the hint in the chart's room
      return;
    }
    this.el.text.querySelector(`[data-index='${i}']`)?.classList.add("lv-pinned");
    this.el.chart.replaceChildren(tokenChart(this.data, i, { row: this.rowAt(i), nTokens: this.model.get("n_tokens"), sc: this.sc }));
    this.keepChartRoom();
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
    if (!over) this.keepRoom(this.el.choices); // (at the end the buttons go, and the results come below)
    this.keepChartRoom();
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
    // The text's room once the box has a width (the output is attached after render), and again if it changes.
    const sized = typeof ResizeObserver === "function" ? new ResizeObserver(() => this.reserveText()) : null;
    sized?.observe(this.el.text);
    this.update();
    if (this.model.get("last")) this.showChart(this.lastPlayed()); // a reopened game: its last token's chart
    return () => {
      sized?.disconnect();
      this.waiting?.();
      this.model.off(TRAITS, onChange);
      this.model.off("msg:custom", onMessage);
    };
  }
}

function render({ model, el }) {
  return new GuessRender(model, el).start();
}

export default { render };
