// The explorer's part of the view (lv.explore): the three sampling sliders in one compact row at
// the top of the view, a two-line readout of the pinned token's probability under them, and the
// chart panel in a column beside them and the text, from the view's top (sticky). Next token's
// choices open in the chart panel's place (same box, same size), drawn as the view's alternatives
// chart, with a "type a token" box that asks the kernel for that token's p. So what a person moves
// (a slider) and what it changes (the pinned token's numbers, its chart) share the top of the view,
// even on a projector; nothing there changes size when it changes content.
//
// Only where the view is an ExplorerView (its `sampling` trait); the kernel owns every number:
// the readout, the choices and the typed token's p come as traits (data), drawn as text here.

import { h } from "../toolkit/dom.js";
import { formatLogprob, formatPercent } from "../toolkit/format.js";
import { residual } from "./chart.js";
import { appendText } from "./text.js";

// (trait, label, min, max, step): the sliders' ranges are the explorer's (records/sampling.py)
const SLIDERS = [
  ["temperature", "temperature", 0, 2, 0.05],
  ["top_p", "top-p", 0.05, 1, 0.05],
  ["min_p", "min-p", 0, 1, 0.01],
];

const COLUMN_STATES = new Set(["exact", "ranges", "waiting"]); // the readout's states that have a column

/**
 * Next token's "other" row: the probability of every token not listed (1 − Σ p of the choices), so
 * the chart adds up to 1, as the lesson teaches; not a choice (it is many tokens), so not clickable.
 */
function otherChoices(options) {
  const rest = residual(options.map(([, , lp]) => lp));
  const row = h("div", "lv-alt-other lv-next-other");
  const name = h("span", "lv-alt-token", "other");
  name.title = `all the tokens outside the top ${options.length}`;
  const bar = h("span", "lv-alt-bar");
  const fill = h("span", "lv-alt-fill");
  fill.style.width = `${rest * 100}%`;
  bar.appendChild(fill);
  row.dataset.p = String(rest);
  row.append(name, bar, h("span", "lv-alt-prob", formatPercent(rest)), h("span", "lv-alt-logprob", rest > 0 ? formatLogprob(Math.log(rest)) : "-inf"));
  return row;
}

const DONE_SHOWN_MS = 8000; // a job that went well: its last word stays this long (an error stays)

/**
 * The status of the work a click started, in the column beside the text, where the click was (on a
 * projector the app's status line is a screen above the text): the job that runs, with the seconds
 * it has taken so far (something moves while a branch takes 26 s), then how it ended. Over the head
 * of the chart's box (its title), so it moves nothing; every line of it shows (it scrolls rather than clips).
 * A click on it puts it away. Only what changes after the view is made: not the "ready" line.
 */
class WorkStatus {
  constructor(model) {
    this.model = model;
    this.el = h("div", "lv-side-status");
    this.el.setAttribute("role", "status");
    this.el.hidden = true;
    this.el.title = "click to put this away (the status line above says it too)";
    this.el.addEventListener("click", () => (this.el.hidden = true));
    this.seen = JSON.stringify(model.get("work") || {}); // (what was said before this view: not news)
    this.since = 0; // when the running job started (this page's clock)
    this.job = null;
    this.timer = 0;
  }

  show() {
    const w = this.model.get("work") || {};
    if (JSON.stringify(w) === this.seen || !w.message) return;
    this.seen = null;
    this.stop();
    if (w.running && w.running !== this.job) this.since = Date.now();
    this.job = w.running || null;
    this.el.className = `lv-side-status lv-side-status-${w.kind || "info"}${w.running ? " lv-side-running" : ""}`;
    const write = () => {
      const seconds = w.running ? ` \u00b7 ${Math.round((Date.now() - this.since) / 1000)} s` : "";
      this.el.textContent = `${w.message}${seconds}`;
    };
    write();
    this.el.hidden = false;
    if (w.running) this.timer = setInterval(write, 1000);
    else if (w.kind !== "error") this.timer = setTimeout(() => (this.el.hidden = true), DONE_SHOWN_MS);
  }

  stop() {
    clearInterval(this.timer);
    clearTimeout(this.timer);
  }
}

/** Whether `model` is an ExplorerView's (it has the sampling traits). */
export const hasSide = (model) => model.get("sampling") != null;

function tokenChip(text) {
  const chip = h("span", "lv-side-tok");
  appendText(chip, text);
  return chip;
}

export class ExplorerSide {
  constructor(view) {
    this.view = view;
    this.model = view.model;
    this.el = h("div", "lv-side"); // the chart's column, beside the text from the view's top
    this.controls = h("div", "lv-side-controls"); // the sliders and the readout, at the top of the text's column
    view.root.classList.add("lv-has-side"); // (explorer.css: the view as a grid of these two columns)
    this.sliders = h("div", "lv-side-sliders");
    this.inputs = {};
    for (const [name, label, min, max, step] of SLIDERS) this.sliders.appendChild(this.slider(name, label, min, max, step));
    this.readout = h("div", "lv-side-readout");
    this.slot = h("div", "lv-side-slot"); // the chart panel, and Next token's choices over it
    this.next = h("div", "lv-next");
    this.next.hidden = true;
    this.work = new WorkStatus(this.model); // how the work a click started goes, over the chart's head
    this.controls.append(this.sliders, this.readout);
    this.el.append(this.slot);
    this.onSampling();
    this.onReadout();
  }

  slider(name, label, min, max, step) {
    const box = h("label", "lv-side-slider");
    const head = h("span", "lv-side-slider-head");
    const value = h("span", "lv-side-value");
    head.append(h("span", "lv-side-name", label), value);
    const input = h("input", "lv-side-range");
    Object.assign(input, { type: "range", min: String(min), max: String(max), step: String(step) });
    input.setAttribute("aria-label", label);
    input.dataset.setting = name;
    input.addEventListener("input", () => {
      value.textContent = Number(input.value).toFixed(2);
      const sampling = { ...(this.model.get("sampling") || {}), [name]: Number(input.value) };
      this.model.set("sampling", sampling);
      this.model.save_changes();
    });
    box.append(head, input);
    this.inputs[name] = { input, value };
    return box;
  }

  /** The panel of this build of the view goes into the slot (under Next token's choices). */
  hold(panelEl) {
    this.slot.replaceChildren(panelEl, this.next, this.work.el);
    this.view.root.prepend(this.controls); // (above the header, legend and strip: built just before)
    this.markEmpty();
    return this.el;
  }

  /** Before the first text: the view's header, legend and strip keep their room but are not shown. */
  markEmpty() {
    this.view.root.classList.toggle("lv-explorer-empty", !this.view.data || this.view.data.n === 0);
  }

  /** The sliders follow the kernel's values (set from Python, or by another view of the app). */
  onSampling() {
    const sampling = this.model.get("sampling") || {};
    const off = sampling.min_p_off || "";
    for (const [name, label] of SLIDERS) {
      const { input, value } = this.inputs[name];
      const v = Number(sampling[name] ?? input.min);
      if (document.activeElement !== input || Number(input.value) !== v) input.value = String(v);
      value.textContent = v.toFixed(2);
      if (name === "min_p") {
        input.disabled = !!off;
        input.title = off || "keep tokens with p >= min-p x p(most likely); 0 is off";
      } else input.title = name === "temperature" ? "0 is greedy" : `keep the most likely tokens up to this ${label} mass`;
    }
  }

  /** The pinned token's probability as the model gave it and under the sliders: two lines, always. */
  onReadout() {
    const r = this.model.get("readout") || {};
    const line1 = h("div", "lv-side-line");
    const line2 = h("div", "lv-side-line lv-side-note");
    this.readout.dataset.state = r.state || "none";
    for (const key of ["model", "sampled", "low", "high", "at"]) {
      if (r[key] == null) delete this.readout.dataset[key];
      else this.readout.dataset[key] = String(r[key]);
    }
    if (!r.state) {
      line1.textContent = "Pin a token (click it): its p under these settings shows here.";
    } else {
      line1.append(`token ${r.at + 1} `, tokenChip(r.token ?? ""), `: p ${formatPercent(r.model)} \u2192 `);
      const sampled = h("b", "lv-side-sampled");
      if (r.state === "exact") sampled.textContent = r.sampled === 0 ? "cut off" : formatPercent(r.sampled);
      else if (r.state === "ranges") sampled.textContent = r.high === 0 ? "cut off" : r.low === r.high ? formatPercent(r.low) : `${formatPercent(r.low)}\u2013${formatPercent(r.high)}`;
      else sampled.textContent = "\u2026";
      line1.append(sampled);
      line2.textContent = `at ${r.label ?? ""} \u00b7 ${r.note ?? ""}`;
    }
    this.readout.title = `${line1.textContent}\n${line2.textContent}`;
    this.readout.replaceChildren(line1, line2);
  }

  /**
   * The chart's column under the sliders at token i (chart.js `secondColumn`): the readout's numbers
   * for every row (the kernel's, exact or a range), only for the token the readout is about; null
   * elsewhere (there the chart shows, headed "sampled from", what the token was sampled from, only
   * where it was sampled): the token the sliders speak of has their numbers and no other.
   */
  columnFor(i, data) {
    const r = this.model.get("readout") || {};
    if (r.at !== i || !COLUMN_STATES.has(r.state) || !data || data.tokens[i] !== r.token) return null;
    const byId = new Map();
    const byText = new Map();
    for (const [id, text, low, high] of r.column || []) {
      if (id >= 0) byId.set(id, [low, high]);
      byText.set(text, [low, high]);
    }
    const valueOf = (alt) => (r.state === "waiting" ? "\u2026" : byId.get(alt.id) ?? byText.get(alt.text) ?? "\u2026");
    const words = { exact: "p under", ranges: "the range its p certainly lies in under", waiting: "being computed under" };
    return {
      head: "at sliders",
      note: `model: the distribution the model gave; at sliders: ${words[r.state]} ${r.label ?? ""} (the readout's numbers)`,
      stat: "p at sliders",
      chosen: r.state === "exact" ? [r.sampled, r.sampled] : r.state === "ranges" ? [r.low, r.high] : "\u2026",
      valueOf,
      otherOf: (rows) => {
        if (r.state !== "exact") return r.state === "waiting" ? "\u2026" : "";
        const values = rows.map(valueOf);
        if (!values.every(Array.isArray)) return "\u2026";
        const rest = residual(values.map(([p]) => Math.log(p)));
        return [rest, rest];
      },
    };
  }

  /** The widest column the chart can hold (for measuring the panel's height before it shows one). */
  static widestColumn() {
    const note = `model: the distribution the model gave; at sliders: the range its p certainly lies in under T = 0.00, top-k 100, top-p 0.00, min-p 0.00 (the readout's numbers)`;
    return { head: "at sliders", note, stat: "p at sliders", chosen: [0.999, 1], valueOf: () => [0.999, 1], otherOf: () => [0.999, 1] };
  }

  /** Next token's choices, in the chart panel's place (hidden when the kernel sends none). */
  onNext() {
    const step = this.model.get("next_step") || {};
    const options = step.options || [];
    this.next.hidden = options.length === 0;
    this.el.classList.toggle("lv-side-choosing", options.length > 0);
    if (!options.length) return this.next.replaceChildren();
    const chart = h("div", "lv-chart lv-next-chart");
    const title = h("div", "lv-chart-title");
    const entropy = Number.isFinite(step.entropy) ? `, entropy ${step.entropy.toFixed(2)} nats` : "";
    title.append(h("b", null, "Next token"), ` after ${step.after} tokens (top ${options.length}${entropy})`);
    const close = h("button", "lv-next-close", "\u00d7");
    Object.assign(close, { type: "button", title: "close the choices (Next token shows them again)" });
    close.addEventListener("click", () => this.model.send({ event: "next_close" }));
    title.appendChild(close);
    const alts = h("div", "lv-alts");
    const head = h("div", "lv-alt-head");
    for (const label of [`top ${options.length}`, "", "prob", "logprob"]) head.appendChild(h("span", null, label));
    alts.appendChild(head);
    options.forEach(([id, text, lp], j) => alts.appendChild(this.choiceRow(id, text, lp, j, step.busy)));
    alts.appendChild(otherChoices(options));
    const hint = h("div", "lv-chart-note", "click a row (or Tab to it, Enter) to append that token");
    chart.append(title, alts, hint, this.typedBox(step));
    this.next.replaceChildren(chart);
  }

  choiceRow(id, text, lp, j, busy) {
    const row = h("div", "lv-alt-row lv-next-choice");
    Object.assign(row, { tabIndex: 0, title: `append \u201c${text}\u201d (id ${id})` });
    row.setAttribute("role", "button");
    row.dataset.tokenId = String(id);
    row.dataset.p = String(Math.exp(lp));
    if (busy) row.setAttribute("aria-disabled", "true");
    const token = h("span", "lv-alt-token");
    appendText(token, text);
    const bar = h("span", "lv-alt-bar");
    const fill = h("span", "lv-alt-fill");
    fill.style.width = `${Math.max(0, Math.min(1, Math.exp(lp))) * 100}%`;
    bar.appendChild(fill);
    row.append(token, bar, h("span", "lv-alt-prob", formatPercent(Math.exp(lp))), h("span", "lv-alt-logprob", formatLogprob(lp)));
    const choose = () => !busy && this.model.send({ event: "choose", token_id: id });
    row.addEventListener("click", choose);
    row.addEventListener("keydown", (e) => {
      if (e.key !== "Enter" && e.key !== " ") return;
      e.preventDefault();
      e.stopPropagation();
      choose();
    });
    if (j === 0) row.classList.add("lv-next-first");
    return row;
  }

  /** "type a token": its p at this position, from the kernel (the whole distribution where it has it). */
  typedBox(step) {
    const box = h("div", "lv-next-typed");
    const input = h("input", "lv-next-typed-input");
    Object.assign(input, { type: "text", placeholder: "type a token, Enter: its p", spellcheck: false });
    input.setAttribute("aria-label", "type a token to see its probability here");
    const answer = h("div", "lv-next-typed-answer");
    const typed = this.model.get("next_typed") || {};
    if (typed.after === step.after && typed.text != null) {
      input.value = typed.text;
      answer.dataset.p = String(typed.p ?? "");
      if (typed.error) answer.textContent = typed.error;
      else {
        answer.append(tokenChip(typed.token ?? typed.text), `: p ${formatPercent(typed.p)}, rank ${typed.rank ?? "?"}`);
        if (typed.note) answer.append(` \u00b7 ${typed.note}`);
      }
    }
    input.addEventListener("keydown", (e) => {
      e.stopPropagation(); // typing here is not a notebook shortcut, nor the app's keys
      if (e.key === "Enter") this.model.send({ event: "next_typed", text: input.value });
    });
    box.append(input, answer);
    return box;
  }

  listen() {
    const traits = [
      ["change:sampling", () => this.onSampling()],
      ["change:readout", () => (this.onReadout(), this.view.shown >= 0 && this.view.showChart(this.view.shown, true))],
      ["change:next_step", () => this.onNext()],
      ["change:next_typed", () => this.onNext()],
      ["change:work", () => this.work.show()],
    ];
    for (const [name, fn] of traits) this.model.on(name, fn);
    this.onNext();
    return () => {
      for (const [name, fn] of traits) this.model.off(name, fn);
      this.work.stop();
    };
  }
}
