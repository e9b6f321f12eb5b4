// The CompareView: traces aligned by bytes, one heatmap row per trace. Hovering an aligned
// span highlights it in every row and lists each row's tokens in it with their alternatives side
// by side (panel.js); clicking pins it. The "difference" mode colours every span by
// logprob(a) - logprob(b). Token text is always inserted as text (textContent), never as HTML.

import "./compare.css";
import { paletteColor, readableOn, rgb } from "../toolkit/colors.js";
import { h, select } from "../toolkit/dom.js";
import { formatFixed } from "../toolkit/format.js";
import { decodeComparison, divergingColor, divergingGradient } from "./decode.js";
import { buildRows } from "./rows.js";
import { showPanel } from "./panel.js";

const PROB_BINS = 32;
const DIFF_BINS = 21; // odd: the middle one is "no difference"

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

  buildHeader() {
    const { model } = this;
    this.header = h("table", "lvc-header");
    const head = h("tr");
    ["", "label", "bits / byte", "perplexity", "tokens"].forEach((t) => head.appendChild(h("th", null, t)));
    this.header.appendChild(head);
    const bpb = model.get("bits_per_byte") || [];
    const ppl = model.get("perplexity") || [];
    const counts = model.get("n_tokens") || [];
    this.labels().forEach((label, r) => {
      const tr = h("tr", "lvc-header-row");
      tr.dataset.row = String(r);
      tr.append(h("td", "lvc-row-no", String(r)), h("td", "lvc-label", label), h("td", "lvc-bpb", formatFixed(bpb[r], 4)),
        h("td", "lvc-ppl", formatFixed(ppl[r], 2)), h("td", "lvc-ntok", String(counts[r] ?? "?")));
      this.header.appendChild(tr);
    });
    const { nSpans } = this.data;
    const note = model.get("same_text")
      ? `${nSpans} aligned spans over the same ${model.get("shared_bytes")} bytes`
      : `texts differ: ${nSpans} spans over the first ${model.get("shared_bytes")} shared bytes, then each row's own rest`;
    this.caption = h("div", "lvc-caption", `${note}; bits per byte and perplexity over the spans every row knows`);
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
    if (diff) {
      bar.style.background = divergingGradient();
      const ends = [`b likelier (\u2212${formatFixed(range, 1)} nats)`, `a likelier (+${formatFixed(range, 1)})`];
      this.legend.append(h("span", null, ends[0]), bar, h("span", null, ends[1]));
    } else {
      const stops = [0, 0.25, 0.5, 0.75, 1].map((p) => `${rgb(paletteColor("viridis", p))} ${p * 100}%`);
      bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
      this.legend.append(h("span", null, "p 0%"), bar, h("span", null, "100%"));
    }
  }

  highlight(s) {
    if (s === this.lit) return;
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
    this.buildHeader();
    this.buildControls();
    const rows = buildRows(this.data, this.labels(), tokenClass);
    this.spanEls = rows.spanEls;
    this.panel = h("div", "lvc-panel");
    this.root.replaceChildren(this.caption, this.header, this.controls, this.panel, rows.el);
    rows.el.addEventListener("mouseover", (e) => ((s) => s >= 0 && this.highlight(s))(this.spanAt(e.target)));
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
