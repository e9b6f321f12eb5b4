// "why?" in the LogprobView: with a token pinned, ask the kernel which earlier tokens pushed the
// model towards it (runner.attribute), and colour the earlier text by the answer.
//
// The request is a custom message {type: "why", id, at, contrast, method}; the kernel answers
// {type: "why-answer", id, ok, key | error} and puts the scores into the `attributions` trait (so
// a saved notebook and the offline HTML keep them); `why_active` names the one colouring the
// text. The view shows that it waits, and says so when no answer came after `why_timeout_s`
// (toolkit/ask.js); a late answer still shows.
// Everything lives in the chart panel (fixed size): asking and answering never move the text.
// Token text is inserted as text (appendText), never as markup.

import "./why.css";
import { ask as askKernel } from "../toolkit/ask.js";
import { h, select } from "../toolkit/dom.js";
import { readArray } from "../toolkit/codec.js";
import {
  agreements, attributionKey, convergenceNote, DISAGREE_BELOW, divergingGradient, METHOD_LABELS, scoreStyle, symmetricBound,
} from "./attribution.js";
import { appendText, inSlices, paint } from "./text.js";

const ALT_ROW = ".lv-alt-row:not(.lv-extra)";
let nextId = 1;

/** The attributions trait's entries, their scores decoded once per entry object. */
const decoded = new WeakMap();
function entries(model) {
  return (model.get("attributions") ?? []).map((a) => {
    if (!decoded.has(a)) decoded.set(a, { ...a, scores: readArray(a.scores, "attribution scores") ?? new Float32Array(0) });
    return decoded.get(a);
  });
}

function tokenChip(text) {
  const chip = h("span", "lv-chip lv-why-chip");
  appendText(chip, text ?? "");
  return chip;
}

export class Why {
  constructor(view) {
    this.view = view;
    this.model = view.model;
    this.method = "gradient_x_input";
    this.pending = null; // {id, at, started, late, answered}
    this.status = ""; // what the last request came to, in words
    this.section = null; // the "why?" part of the pinned chart
    this.painted = 0; // spans 0..painted-1 carry attribution colours
    this.cancelPaint = () => {};
    this.ticker = null;
    this.wasDrawn = this.drawn(); // (a first answer added to a view with no runner: "why?" drawn from then)
    const m = this.model;
    this.handlers = [
      ["msg:custom", (msg) => this.onMessage(msg)],
      ["change:attributions", () => (this.drawn() !== this.wasDrawn ? this.availabilityChanged() : this.refresh())],
      ["change:why_active", () => this.refresh()],
      ["change:can_why", () => this.availabilityChanged()],
      ["change:color_mode change:palette change:color_range", () => this.active() && this.setActive("")],
    ];
    for (const [name, fn] of this.handlers) m.on(name, fn);
  }

  stop() {
    for (const [name, fn] of this.handlers) this.model.off(name, fn);
    clearInterval(this.ticker);
    this.pending?.answered();
    this.cancelPaint();
  }

  /** The attribution colouring the text, if it is of the pinned token. */
  active() {
    const key = this.model.get("why_active");
    const a = key ? entries(this.model).find((e) => e.key === key) : null;
    return a && a.at === this.view.pinned() ? a : null;
  }

  setActive(key) {
    this.model.set("why_active", key);
    this.model.save_changes();
  }

  /** The pin moved or was released (Esc): back to the probability colours, unless it is the active one's token. */
  onPin() {
    const key = this.model.get("why_active");
    if (key && !this.active()) this.setActive("");
    else this.repaint();
  }

  refresh() {
    this.repaint();
    this.fill();
  }

  /** The text is built (or rebuilt): colour it again if an attribution is on show. */
  afterBuild() {
    this.painted = 0;
    if (this.active()) this.repaint();
  }

  /** Colour spans 0..at-1 by the active attribution, or give the painted ones their probability colours back. */
  repaint() {
    const { view } = this;
    if (!view.text) return;
    this.cancelPaint();
    const a = this.active();
    const spans = view.text.spans;
    spans.forEach((s) => s.classList.remove("lv-why-target"));
    view.root.classList.toggle("lv-why-on", !!a); // the probability legend steps back (why.css)
    if (!a) {
      if (this.painted) view.recolor();
      for (let i = 0; i < Math.min(this.painted, spans.length); i++) spans[i].removeAttribute("data-attribution");
      this.painted = 0;
      return;
    }
    const bound = symmetricBound(a.scores);
    const n = Math.min(view.text.built, view.data.n);
    this.cancelPaint = inSlices(n, 2000, (start, end) => {
      for (let i = start; i < end; i++) {
        if (i < a.at && i < a.scores.length) {
          paint(spans[i], scoreStyle(a.scores[i], bound));
          spans[i].setAttribute("data-attribution", String(a.scores[i]));
        } else {
          paint(spans[i], null); // after the token: not part of the answer
          spans[i].removeAttribute("data-attribution");
        }
      }
    });
    spans[a.at]?.classList.add("lv-why-target");
    this.painted = n;
  }

  /** Ask why the pinned token (rather than the alternative `j` of its chart, when given). */
  ask(j = -1) {
    const { view, model } = this;
    const at = view.pinned();
    if (at < 0 || (this.pending && !this.pending.late)) return; // one question at a time (a lost one may be asked again)
    const why = this.disabledReason(at);
    if (why) return this.say(why);
    const { data } = view;
    const contrastId = j >= 0 ? data.altId(at, j) : -1;
    const contrast = j < 0 ? null : contrastId >= 0 ? contrastId : data.altText(at, j);
    const key = contrast == null || contrastId >= 0 ? attributionKey(at, this.method, j < 0 ? null : contrastId) : null;
    if (key && entries(model).some((e) => e.key === key)) {
      this.status = "";
      return this.setActive(key);
    }
    const id = `why-${nextId++}`;
    const pending = { id, at, started: Date.now(), late: false, answered: () => {} };
    this.pending = pending;
    this.status = "";
    clearInterval(this.ticker);
    pending.answered = askKernel(model, { message: { type: "why", id, at, contrast, method: this.method } }, {
      timeout: (Number(model.get("why_timeout_s")) || 60) * 1000,
      noAnswer: (why, error) => {
        if (this.pending !== pending) return; // answered, or asked again
        if (why === "unsent") {
          this.pending = null;
          return this.say(`could not ask the kernel: ${error}`);
        }
        pending.late = true;
        this.fill();
      },
    });
    if (this.pending !== pending) return;
    this.ticker = setInterval(() => this.tick(), 500); // the seconds waited, on show
    this.fill();
  }

  /** `w`: ask why, against the alternative under the pointer in the chart when there is one. */
  askFromKey() {
    const { view } = this;
    const at = view.pinned();
    if (at < 0) return;
    const rows = view.shown === at ? [...view.panel.el.querySelectorAll(ALT_ROW)] : [];
    const j = rows.findIndex((r) => r.matches(":hover"));
    this.ask(j >= 0 && !rows[j].classList.contains("lv-chosen") ? j : -1);
  }

  /** Whether "why?" is drawn at all: a kernel with the runner can ask, or the trait holds answers to
   * show. Otherwise (a view with no runner, an offline copy of one) nothing of it is drawn: a button
   * that only ever says "needs the model" looks like one a class could press. */
  drawn() {
    return this.canAsk() || entries(this.model).length > 0;
  }

  /** A kernel with the runner is there to ask (not an offline copy). */
  canAsk() {
    return Boolean(this.model.get("can_why")) && !this.view.root?.closest(".lv-standalone");
  }

  /** A runner was given or taken (`view.runner = r`), or a first answer added: the chart gains or
   * loses its "why?", measured again. */
  availabilityChanged() {
    const { view } = this;
    this.wasDrawn = this.drawn();
    if (!view.data || !view.panel) return;
    view.panel.sized = false;
    view.measureLater();
    view.showChart(view.shown, true);
    this.repaint();
  }

  disabledReason(at) {
    if (at < 1) return "the first token has no tokens before it to ask about";
    if (this.view.root.closest(".lv-standalone")) return "offline copy: asking needs the kernel";
    if (!this.model.get("can_why")) return "why? needs the model: LogprobView(trace, runner=r) or view.runner = r";
    return "";
  }

  tick() {
    if (!this.pending) return clearInterval(this.ticker);
    this.fill();
  }

  onMessage(msg) {
    if (!msg || msg.type !== "why-answer" || !this.pending || msg.id !== this.pending.id) return;
    const { at } = this.pending;
    this.pending.answered();
    this.pending = null;
    clearInterval(this.ticker);
    if (msg.ok) {
      this.status = "";
      if (this.view.pinned() === at) this.setActive(msg.key); // (kept in the trait either way)
    } else this.status = `the kernel could not answer: ${msg.error}`;
    this.fill();
  }

  say(text) {
    this.status = text;
    this.fill();
  }

  /** Add the "why?" part to the chart of token i when it is the pinned one (and to the measured chart). */
  decorate(chart, i, measuring = false) {
    if (i < 0 || (!measuring && i !== this.view.pinned()) || !this.drawn()) return;
    const section = h("div", "lv-why");
    chart.appendChild(section);
    chart.classList.add("lv-why-able");
    this.addRowButtons(chart, i);
    if (this.canAsk()) chart.querySelector(".lv-pin-note")?.append(" \u00b7 w why?"); // the key, listed with the others
    if (measuring) return this.fillMeasured(section);
    this.section = section;
    this.fill(true); // (the chart is not in the page yet)
  }

  /** A small "why not?" on each alternative not chosen: why the token rather than that one. */
  addRowButtons(chart, i) {
    const rows = [...chart.querySelectorAll(ALT_ROW)];
    if (!this.canAsk()) return; // answers on show, no runner to ask: no button that cannot ask
    rows.forEach((row, j) => {
      if (row.classList.contains("lv-chosen")) return;
      const btn = h("button", "lv-why-row", "why?");
      btn.type = "button";
      btn.title = "why the chosen token rather than this one";
      btn.addEventListener("click", (e) => {
        e.stopPropagation(); // not a branch, not a pin
        this.ask(j);
      });
      row.appendChild(btn);
    });
    if (this.view.pinned() !== i) rows.forEach((r) => r.querySelector(".lv-why-row")?.setAttribute("tabindex", "-1"));
  }

  /** The section's controls: the button, the method select and the status line. */
  controls(at) {
    const bar = h("div", "lv-why-bar");
    const btn = h("button", "lv-why-ask", "why?");
    btn.type = "button";
    const reason = this.disabledReason(at);
    // Plainly unavailable (aria-disabled, crossed out, the reason on hover and in the status line);
    // not `disabled`, so that the hover still shows the reason and a click says it again.
    const waiting = this.pending && !this.pending.late;
    if (reason || waiting) btn.classList.add("lv-why-disabled");
    if (reason) btn.setAttribute("aria-disabled", "true");
    btn.title = reason ? `unavailable: ${reason}` : waiting ? "asking the kernel…" : "which earlier tokens pushed the model to this token (w)";
    btn.addEventListener("click", (e) => (e.stopPropagation(), this.ask()));
    const methods = Object.entries(METHOD_LABELS);
    const sel = select(methods, this.method, "lv-why-method", (v) => {
      this.method = v;
    });
    sel.title = "attribution method";
    bar.append(btn, sel, h("span", "lv-why-key", "w"));
    return bar;
  }

  statusText(at) {
    const p = this.pending;
    if (p && p.at === at) {
      const s = Math.floor((Date.now() - p.started) / 1000);
      if (p.late) return { cls: "lv-why-late", text: `no answer from the kernel after ${s} s: is it busy? (a late answer still shows)` };
      return { cls: "lv-why-wait", text: `asking the kernel\u2026 ${s} s` };
    }
    if (this.status) return { cls: "lv-why-error", text: this.status };
    const reason = this.disabledReason(at);
    return reason ? { cls: "lv-why-off", text: reason } : null;
  }

  /** Fill the pinned chart's section from the current state. */
  fill(fresh = false) {
    const { section, view } = this;
    if (!section || (!fresh && !section.isConnected)) return;
    const at = view.pinned();
    const a = this.active();
    if (a && !this.pending) this.method = a.method; // the select shows the method on show
    section.replaceChildren(this.controls(at));
    const status = this.statusText(at);
    if (status) section.appendChild(h("div", `lv-why-status ${status.cls}`, status.text));
    if (a) this.explain(section, a);
  }

  /** The legend of the active attribution, its convergence, and how the methods agree. */
  explain(section, a) {
    const bound = symmetricBound(a.scores);
    const legend = h("div", "lv-why-legend");
    const left = h("span", "lv-why-end");
    if (a.contrast != null) left.append("towards ", tokenChip(a.contrast));
    else left.append("lowered ", tokenChip(a.target));
    const right = h("span", "lv-why-end");
    right.append("towards ", tokenChip(a.target));
    const bar = h("div", "lv-why-scale");
    bar.style.background = divergingGradient();
    const ticks = h("div", "lv-why-ticks");
    for (const t of [-bound, 0, bound]) ticks.appendChild(h("span", null, t === 0 ? "0" : t.toPrecision(2)));
    const scale = h("div", "lv-why-scale-box");
    scale.append(bar, ticks);
    legend.append(left, scale, right);
    section.appendChild(legend);
    const what = h("div", "lv-why-what", `${METHOD_LABELS[a.method] ?? a.method} of ${a.quantity}`);
    if (a.value != null) what.append(` = ${a.value.toFixed(3)}`);
    section.appendChild(what);
    const note = convergenceNote(a.meta);
    if (note) section.appendChild(h("div", "lv-why-note lv-why-unconverged", `\u26a0 ${note}`));
    const same = entries(this.model).filter((e) => e.at === a.at && e.contrast_id === a.contrast_id);
    if (same.length > 1) this.sideBySide(section, a, same);
  }

  /** The methods computed for this token and contrast: pick one, and their rank agreement. */
  sideBySide(section, a, same) {
    const row = h("div", "lv-why-methods");
    for (const e of same) {
      const b = h("button", `lv-why-pick${e.key === a.key ? " lv-why-on" : ""}`, METHOD_LABELS[e.method] ?? e.method);
      b.type = "button";
      b.addEventListener("click", (ev) => (ev.stopPropagation(), this.setActive(e.key)));
      row.appendChild(b);
    }
    section.appendChild(row);
    for (const { a: m1, b: m2, rho } of agreements(same)) {
      const text = `${METHOD_LABELS[m1]} vs ${METHOD_LABELS[m2]}: rank agreement (Spearman) ${Number.isFinite(rho) ? rho.toFixed(2) : "?"}`;
      const el = h("div", "lv-why-agree", text);
      el.setAttribute("data-rho", String(rho));
      section.appendChild(el);
      if (rho < DISAGREE_BELOW) {
        section.appendChild(h("div", "lv-why-note lv-why-disagree", `\u26a0 these methods disagree (${rho.toFixed(2)} < ${DISAGREE_BELOW}): trust neither alone`));
      }
    }
  }

  /** The room the section takes at most (for the panel's fixed height): less without a runner nor answers. */
  fillMeasured(section) {
    const answers = this.model.get("can_why") || (this.model.get("attributions") ?? []).length;
    section.classList.add(answers ? "lv-why-room" : "lv-why-room-off");
  }

}
