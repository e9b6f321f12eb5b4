// The CompareView: traces aligned by bytes, one heatmap row per trace. Hovering an aligned
// span highlights it in every row and lists each row's tokens in it with their alternatives side
// by side (panel.js); clicking pins it. The "difference" mode colours every span by
// logprob(a) - logprob(b). Token text is always inserted as text (textContent), never as HTML.

import "./compare.css";
import { paletteColor, readableOn, rgb } from "../toolkit/colors.js";
import { h, select } from "../toolkit/dom.js";
import { formatFixed } from "../toolkit/format.js";
import { decodeComparison, divergingColor, divergingGradient } from "./decode.js";
import { buildHeader } from "./header.js";
import { buildRows } from "./rows.js";
import { showPanel, showTail } from "./panel.js";

const PROB_BINS = 32;
const DIFF_BINS = 21; // odd: the middle one is "no difference"
const SAME_NATS = 1e-4; // a prefix scored again (a branch) differs by float rounding only, ~1e-6

/** CSS rules of the colour classes: lvc-c<bin> (probability), lvc-d<bin> (difference, in its mode only). */
function colourRules() {
  const rules = [];
  const rule = (selector, c) => `${selector} { background: ${rgb(c)}; color: ${readableOn(c)}; }`;
  for (let b = 0; b < PROB_BINS; b++) rules.push(rule(`.lvc-root .lvc-c${b}`, paletteColor("viridis", (b + 0.5) / PROB_BINS)));
  for (let b = 0; b < DIFF_BINS; b++) {
    rules.push(rule(`.lvc-root.lvc-mode-diff .lvc-d${b}`, divergingColor(-1 + (2 * b) / (DIFF_BINS - 1), 1)));
  }
  return rules.join("\n");
}

/** The colour class of a token's probability (unknown: dashed outline). */
export function tokenClass(logprob) {
  if (Number.isNaN(logprob)) return "lvc-tok lvc-unknown";
  return `lvc-tok lvc-c${Math.min(PROB_BINS - 1, Math.floor(Math.exp(logprob) * PROB_BINS))}`;
}

function diffBin(d, range) {
  const t = (Math.max(-1, Math.min(1, d / range)) + 1) / 2;
  return Math.round(t * (DIFF_BINS - 1));
}

/** One output of the compare view. */
class CompareRender {
  constructor(model, el) {
    this.model = model;
    this.root = h("div", "lvc-root");
    this.root.tabIndex = 0;
    el.append(h("style", null, colourRules()), this.root);
    this.data = decodeComparison(null);
    this.spanEls = []; // [row][span] -> element
    this.spanBins = []; // [span] -> its difference class
    this.lit = -1; // the highlighted span
  }

  pinned() {
    const s = this.model.get("selected");
    return s >= 0 && s < this.data.nSpans ? s : -1;
  }

  labels() {
    return this.model.get("labels") || [];
  }

  setTrait(name, value) {
    this.model.set(name, value);
    this.model.save_changes();
  }

  buildControls() {
    const { model } = this;
    this.controls = h("div", "lvc-controls");
    const modes = [["probability", "colour: each row's probability"], ["difference", "colour: difference a − b"]];
    const modeSel = select(modes, model.get("color_mode"), "lvc-mode", (v) => this.setTrait("color_mode", v));
    const rowOptions = this.labels().map((l, r) => [r, `${r}: ${l}`]);
    const [a, b] = model.get("diff_rows");
    const setRows = (which, v) => {
      const rows = [...model.get("diff_rows")];
      rows[which] = Number(v);
      if (rows[0] === rows[1]) rows[1 - which] = rows[which] === 0 ? 1 : 0;
      this.setTrait("diff_rows", rows);
    };
    const aSel = select(rowOptions, a, "lvc-row-a", (v) => setRows(0, v));
    const bSel = select(rowOptions, b, "lvc-row-b", (v) => setRows(1, v));
    this.legend = h("div", "lvc-legend");
    this.controls.append(modeSel, h("span", "lvc-ctl-label", "a:"), aSel, h("span", "lvc-ctl-label", "b:"), bSel, this.legend);
  }

  // Colours are classes (PROB_BINS probability levels, DIFF_BINS difference levels) set once per
  // token and per span, not inline styles: switching mode toggles one class on the root.
  paintDiff() {
    const { data, model } = this;
    const [a, b] = model.get("diff_rows");
    const range = model.get("diff_range");
    for (let s = 0; s < data.nSpans; s++) {
      const d = data.spanLogprobs[a * data.nSpans + s] - data.spanLogprobs[b * data.nSpans + s];
      const cls = Number.isNaN(d) ? "lvc-dnan" : `lvc-d${diffBin(d, range)}`;
      const text = Number.isNaN(d) ? "unknown" : d.toFixed(4);
      for (const spans of this.spanEls) {
        const el = spans[s];
        if (this.spanBins[s]) el.classList.remove(this.spanBins[s]);
        el.classList.add(cls);
        el.setAttribute("data-diff", text);
      }
      this.spanBins[s] = cls;
    }
  }

  paintLegend() {
    const diff = this.model.get("color_mode") === "difference";
    this.root.classList.toggle("lvc-mode-diff", diff);
    const range = this.model.get("diff_range");
    this.legend.replaceChildren();
    const bar = h("span", "lvc-gradient");
    this.diffNote.textContent = diff ? this.sameDifference() : "";
    const probBar = () => {
      const el = h("span", "lvc-gradient");
      const stops = [0, 0.25, 0.5, 0.75, 1].map((p) => `${rgb(paletteColor("viridis", p))} ${p * 100}%`);
      el.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
      return el;
    };
    if (diff) {
      bar.style.background = divergingGradient();
      const digits = range < 1 ? 2 : 1;
      const ends = [`b likelier (\u2212${formatFixed(range, digits)} nats)`, `a likelier (+${formatFixed(range, digits)})`];
      this.legend.append(h("span", null, ends[0]), bar, h("span", null, ends[1]));
      // the own continuations have no counterpart in the other row: they keep their probability colours
      if (!this.model.get("same_text")) this.legend.append(h("span", "lvc-legend-own", "\u00b7 own continuations: p 0%"), probBar(), h("span", null, "100%"));
    } else {
      this.legend.append(h("span", null, "p 0%"), probBar(), h("span", null, "100%"));
    }
  }

  /** In difference mode: say so when rows a and b agree on every aligned span (branches of one model). */
  sameDifference() {
    const { data } = this;
    const [a, b] = this.model.get("diff_rows");
    let known = 0;
    for (let s = 0; s < data.nSpans; s++) {
      const d = data.spanLogprobs[a * data.nSpans + s] - data.spanLogprobs[b * data.nSpans + s];
      if (Number.isNaN(d)) continue;
      if (Math.abs(d) > SAME_NATS) return "";
      known++;
    }
    const labels = this.labels();
    const where = this.model.get("same_text") ? "" : "; they differ in their own continuations";
    return known
      ? `${labels[a]} and ${labels[b]} give the same logprob on every aligned span (|a \u2212 b| \u2264 ${SAME_NATS})${where}.`
      : `${labels[a]} and ${labels[b]} have no aligned span whose logprob both know${where}.`;
  }

  /** Hovering token i of row r's own continuation: every row's own numbers, and that token. */
  showTailAt(r, i) {
    this.highlight(-1);
    this.lit = -3; // the panel shows a tail: the next span hover rebuilds it
    this.clearTail();
    const tail = this.root.querySelector(`.lvc-tail[data-row='${r}']`);
    tail?.classList.add("lvc-hl-tail");
    tail?.querySelector(`.lvc-tok[data-index='${i}']`)?.classList.add("lvc-hl-tok");
    showTail(this.panel, this.data, r, i, this.labels(), (this.model.get("numbers") || {}).own || []);
  }

  clearTail() {
    this.root.querySelectorAll(".lvc-hl-tail, .lvc-hl-tok").forEach((e) => e.classList.remove("lvc-hl-tail", "lvc-hl-tok"));
  }

  onHover(e) {
    const s = this.spanAt(e.target);
    if (s >= 0) return this.highlight(s);
    const tok = e.target instanceof Element ? e.target.closest(".lvc-tail .lvc-tok") : null;
    if (tok) this.showTailAt(Number(tok.closest(".lvc-tail").dataset.row), Number(tok.dataset.index));
  }

  highlight(s) {
    if (s === this.lit) return;
    if (this.lit === -3) this.clearTail();
    if (this.lit >= 0) this.spanEls.forEach((spans) => spans[this.lit]?.classList.remove("lvc-hl"));
    this.lit = s;
    if (s >= 0) this.spanEls.forEach((spans) => spans[s]?.classList.add("lvc-hl"));
    showPanel(this.panel, this.data, s, this.labels(), s === this.pinned());
  }

  showPinned() {
    const p = this.pinned();
    this.root.querySelectorAll(".lvc-pinned").forEach((e) => e.classList.remove("lvc-pinned"));
    if (p >= 0) this.spanEls.forEach((spans) => spans[p]?.classList.add("lvc-pinned"));
    this.lit = -2; // force the panel to be rebuilt
    this.highlight(p);
  }

  spanAt(target) {
    const spanEl = target instanceof Element ? target.closest(".lvc-span") : null;
    return spanEl && this.root.contains(spanEl) ? Number(spanEl.dataset.span) : -1;
  }

  onClick(e) {
    const s = this.spanAt(e.target);
    if (s < 0) return;
    this.setTrait("selected", s === this.pinned() ? -1 : s);
    this.root.focus({ preventScroll: true });
  }

  onKey(e) {
    const p = this.pinned();
    let next = null;
    if (e.key === "Escape") next = -1;
    else if (e.key === "ArrowRight" && p >= 0) next = Math.min(p + 1, this.data.nSpans - 1);
    else if (e.key === "ArrowLeft" && p >= 0) next = Math.max(p - 1, 0);
    if (next === null) return;
    e.preventDefault();
    this.setTrait("selected", next);
  }

  build() {
    this.data = decodeComparison(this.model.get("_payload"));
    this.lit = -1;
    this.spanBins = new Array(this.data.nSpans).fill(null);
    ({ table: this.header, caption: this.caption } = buildHeader(this.model, this.data.nSpans, this.labels()));
    this.buildControls();
    const rows = buildRows(this.data, this.labels(), tokenClass);
    this.spanEls = rows.spanEls;
    this.panel = h("div", "lvc-panel");
    this.diffNote = h("span", "lvc-diff-note");
    this.controls.appendChild(this.diffNote);
    // a narrow screen (a projector at 150 %) scrolls the wide header sideways, not the whole view
    const headerBox = h("div", "lvc-header-box");
    headerBox.appendChild(this.header);
    this.root.replaceChildren(this.caption, headerBox, this.controls, this.panel, rows.el);
    rows.el.addEventListener("mouseover", (e) => this.onHover(e));
    rows.el.addEventListener("mouseleave", () => this.highlight(this.pinned()));
    rows.el.addEventListener("click", (e) => this.onClick(e));
    this.paintDiff();
    this.paintLegend();
    this.showPinned();
  }

  /** The selects follow the traits (set from Python or by another output of the same model). */
  onColor() {
    const [a, b] = this.model.get("diff_rows");
    const sels = this.controls.querySelectorAll("select");
    sels[0].value = this.model.get("color_mode");
    sels[1].value = String(a);
    sels[2].value = String(b);
    this.paintLegend();
  }

  start() {
    const onKey = (e) => this.onKey(e);
    this.root.addEventListener("keydown", onKey);
    const onDiff = () => (this.paintDiff(), this.onColor());
    const handlers = [
      ["change:_payload", () => this.build()],
      ["change:labels", () => this.build()],
      ["change:selected", () => this.showPinned()],
      ["change:color_mode", () => this.onColor()],
      ["change:diff_rows", onDiff],
      ["change:diff_range", onDiff],
    ];
    for (const [name, fn] of handlers) this.model.on(name, fn);
    this.build();
    return () => {
      for (const [name, fn] of handlers) this.model.off(name, fn);
      this.root.removeEventListener("keydown", onKey);
    };
  }
}

function render({ model, el }) {
  return new CompareRender(model, el).start();
}

export default { render };
