// The CompareView: traces aligned by bytes, one heatmap row per trace. Hovering an aligned
// span highlights it in every row and lists each row's tokens in it with their alternatives side
// by side; clicking pins it. The "difference" mode colours every span by logprob(a) - logprob(b).
// Token text is always inserted as text (textContent), never as HTML: a token can be `<script>`.

import { paletteColor, readableOn } from "../colors.js";
import { STYLES } from "./styles.js";
import { decodeComparison, divergingColor, divergingGradient, fmt, percent, visible } from "./decode.js";

const ALTERNATIVES = 5; // per token in the side-by-side panel
const TOKENS_IN_PANEL = 12; // a span can hold many tokens of a fine tokenizer; list the first ones

function h(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text != null) el.textContent = text;
  return el;
}

// Spans per block: a block is laid out and painted only near the view (content-visibility), so a
// hover repaints a few hundred tokens, not a whole 10,000-byte row.
const BLOCK = 100;
const PROB_BINS = 32;
const DIFF_BINS = 21; // odd: the middle one is "no difference"

/** CSS rules of the colour classes: lvc-c<bin> (probability), lvc-d<bin> (difference, in its mode only). */
function colourRules() {
  const rules = [];
  const rule = (selector, rgb) => `${selector} { background: rgb(${rgb.join(",")}); color: ${readableOn(rgb)}; }`;
  for (let b = 0; b < PROB_BINS; b++) rules.push(rule(`.lvc-root .lvc-c${b}`, paletteColor("viridis", (b + 0.5) / PROB_BINS)));
  for (let b = 0; b < DIFF_BINS; b++) {
    rules.push(rule(`.lvc-root.lvc-mode-diff .lvc-d${b}`, divergingColor(-1 + (2 * b) / (DIFF_BINS - 1), 1)));
  }
  return rules.join("\n");
}

function tokenClass(logprob) {
  if (Number.isNaN(logprob)) return "lvc-tok lvc-unknown";
  return `lvc-tok lvc-c${Math.min(PROB_BINS - 1, Math.floor(Math.exp(logprob) * PROB_BINS))}`;
}

/** Token i of a row in the text: a piece of a split character shows the character on its last piece. */
function tokenEl(row, i) {
  const tok = h("span", tokenClass(row.logprobs[i]) + (row.split[i] ? " lvc-split" : ""), row.shown[i]);
  if (row.split[i]) tok.title = `a piece of a character split across tokens: ${row.tokens[i]}`;
  return tok;
}

function diffBin(d, range) {
  const t = (Math.max(-1, Math.min(1, d / range)) + 1) / 2;
  return Math.round(t * (DIFF_BINS - 1));
}

function select(options, value, className, onChange) {
  const el = h("select", className);
  options.forEach(([v, label]) => {
    const opt = h("option", null, label);
    opt.value = String(v);
    el.appendChild(opt);
  });
  el.value = String(value);
  el.addEventListener("change", () => onChange(el.value));
  return el;
}

function render({ model, el }) {
  const root = h("div", "lvc-root");
  root.tabIndex = 0;
  const style = h("style", null, STYLES + colourRules());
  el.append(style, root);

  let data = decodeComparison(null);
  let spanEls = []; // [row][span] -> element
  let tokenEls = []; // [row][token] -> element
  let spanBins = []; // [span] -> its difference class
  let lit = -1; // the highlighted span
  let caption, header, controls, legend, rowsEl, panel;

  const pinned = () => {
    const s = model.get("selected");
    return s >= 0 && s < data.nSpans ? s : -1;
  };
  const labels = () => model.get("labels") || [];

  // ---- building ----

  function buildHeader() {
    header = h("table", "lvc-header");
    const head = h("tr");
    ["", "label", "bits / byte", "perplexity", "tokens"].forEach((t) => head.appendChild(h("th", null, t)));
    header.appendChild(head);
    const bpb = model.get("bits_per_byte") || [];
    const ppl = model.get("perplexity") || [];
    const counts = model.get("n_tokens") || [];
    labels().forEach((label, r) => {
      const tr = h("tr", "lvc-header-row");
      tr.dataset.row = String(r);
      tr.append(h("td", "lvc-row-no", String(r)), h("td", "lvc-label", label), h("td", "lvc-bpb", fmt(bpb[r], 4)),
        h("td", "lvc-ppl", fmt(ppl[r], 2)), h("td", "lvc-ntok", String(counts[r] ?? "?")));
      header.appendChild(tr);
    });
    const note = model.get("same_text")
      ? `${data.nSpans} aligned spans over the same ${model.get("shared_bytes")} bytes`
      : `texts differ: ${data.nSpans} spans over the first ${model.get("shared_bytes")} shared bytes, then each row's own rest`;
    caption = h("div", "lvc-caption", `${note}; bits per byte and perplexity over the spans every row knows`);
  }

  function buildControls() {
    controls = h("div", "lvc-controls");
    const modeSel = select([["probability", "colour: each row's probability"], ["difference", "colour: difference a − b"]],
      model.get("color_mode"), "lvc-mode", (v) => { model.set("color_mode", v); model.save_changes(); });
    const rowOptions = labels().map((l, r) => [r, `${r}: ${l}`]);
    const [a, b] = model.get("diff_rows");
    const setRows = (which, v) => {
      const rows = [...model.get("diff_rows")];
      rows[which] = Number(v);
      if (rows[0] === rows[1]) rows[1 - which] = rows[which] === 0 ? 1 : 0;
      model.set("diff_rows", rows);
      model.save_changes();
    };
    const aSel = select(rowOptions, a, "lvc-row-a", (v) => setRows(0, v));
    const bSel = select(rowOptions, b, "lvc-row-b", (v) => setRows(1, v));
    legend = h("div", "lvc-legend");
    controls.append(modeSel, h("span", "lvc-ctl-label", "a:"), aSel, h("span", "lvc-ctl-label", "b:"), bSel, legend);
  }

  function buildRows() {
    rowsEl = h("div", "lvc-rows");
    spanEls = [];
    tokenEls = [];
    data.rows.forEach((row, r) => {
      const rowEl = h("div", "lvc-row");
      rowEl.dataset.row = String(r);
      const label = h("div", "lvc-row-label", labels()[r] ?? String(r));
      const text = h("div", "lvc-text");
      const frag = document.createDocumentFragment();
      const spans = new Array(data.nSpans);
      const toks = new Array(row.n);
      let block = null;
      for (let s = 0; s < data.nSpans; s++) {
        if (s % BLOCK === 0) {
          block = h("div", "lvc-block");
          frag.appendChild(block);
        }
        const spanEl = h("span", "lvc-span");
        spanEl.dataset.span = String(s);
        for (let i = row.spanFirst[s]; i >= 0 && i < row.spanEnd[s]; i++) {
          const tok = tokenEl(row, i);
          tok.dataset.index = String(i);
          spanEl.appendChild(tok);
          toks[i] = tok;
        }
        spans[s] = spanEl;
        block.appendChild(spanEl);
      }
      if (row.tailFrom < row.n) {
        const tail = h("div", "lvc-block lvc-tail");
        tail.appendChild(h("span", "lvc-fork", "\u2442 differs from here:"));
        frag.appendChild(tail);
        for (let i = row.tailFrom, k = 0; i < row.n; i++, k++) {
          const tok = tokenEl(row, i);
          tok.dataset.index = String(i);
          tail.appendChild(tok);
          toks[i] = tok;
        }
      }
      text.appendChild(frag);
      rowEl.append(label, text);
      rowsEl.appendChild(rowEl);
      spanEls.push(spans);
      tokenEls.push(toks);
    });
  }

  // ---- colours ----
  // Colours are classes (PROB_BINS probability levels, DIFF_BINS difference levels) set once per
  // token and per span, not inline styles: switching mode toggles one class on the root.

  function paintDiff() {
    const [a, b] = model.get("diff_rows");
    const range = model.get("diff_range");
    for (let s = 0; s < data.nSpans; s++) {
      const d = data.spanLogprobs[a * data.nSpans + s] - data.spanLogprobs[b * data.nSpans + s];
      const cls = Number.isNaN(d) ? "lvc-dnan" : `lvc-d${diffBin(d, range)}`;
      const text = Number.isNaN(d) ? "unknown" : d.toFixed(4);
      for (const spans of spanEls) {
        const el = spans[s];
        if (spanBins[s]) el.classList.remove(spanBins[s]);
        el.classList.add(cls);
        el.setAttribute("data-diff", text);
      }
      spanBins[s] = cls;
    }
  }

  function paint() {
    const diff = model.get("color_mode") === "difference";
    root.classList.toggle("lvc-mode-diff", diff);
    const range = model.get("diff_range");
    legend.replaceChildren();
    const bar = h("span", "lvc-gradient");
    if (diff) {
      bar.style.background = divergingGradient();
      legend.append(h("span", null, `b likelier (\u2212${fmt(range, 1)} nats)`), bar, h("span", null, `a likelier (+${fmt(range, 1)})`));
    } else {
      const stops = [0, 0.25, 0.5, 0.75, 1].map((p) => `rgb(${paletteColor("viridis", p).join(",")}) ${p * 100}%`);
      bar.style.background = `linear-gradient(to right, ${stops.join(", ")})`;
      legend.append(h("span", null, "p 0%"), bar, h("span", null, "100%"));
    }
  }

  // ---- highlight and the side-by-side panel ----

  function highlight(s) {
    if (s === lit) return;
    if (lit >= 0) spanEls.forEach((spans) => spans[lit]?.classList.remove("lvc-hl"));
    lit = s;
    if (s >= 0) spanEls.forEach((spans) => spans[s]?.classList.add("lvc-hl"));
    showPanel(s);
  }

  function showPanel(s) {
    panel.replaceChildren();
    if (s < 0) {
      panel.dataset.span = "-1";
      panel.appendChild(h("div", "lvc-placeholder", "Hover a span to see every row's tokens and alternatives there; click to pin it."));
      return;
    }
    panel.dataset.span = String(s);
    const title = h("div", "lvc-panel-title");
    title.append(h("span", null, `span ${s} \u00b7 bytes ${data.spanStarts[s]}\u2013${data.spanEnds[s]} \u00b7 `),
      h("code", "lvc-span-text", visible(data.spanTexts[s])), h("span", null, s === pinned() ? " \u00b7 pinned" : ""));
    const cols = h("div", "lvc-cols");
    data.rows.forEach((row, r) => {
      const col = h("div", "lvc-col");
      col.dataset.row = String(r);
      col.append(h("div", "lvc-col-label", labels()[r] ?? String(r)),
        h("div", "lvc-col-sum", `logprob ${fmt(data.spanLogprobs[r * data.nSpans + s])} \u00b7 ${row.spanEnd[s] - row.spanFirst[s]} token(s)`));
      const last = Math.min(row.spanEnd[s], row.spanFirst[s] + TOKENS_IN_PANEL);
      for (let i = row.spanFirst[s]; i >= 0 && i < last; i++) col.appendChild(tokenBox(row, i));
      if (row.spanEnd[s] > last) col.appendChild(h("div", "lvc-more", `\u2026 ${row.spanEnd[s] - last} more`));
      cols.appendChild(col);
    });
    panel.append(title, cols);
  }

  function tokenBox(row, i) {
    const box = h("div", "lvc-token-box");
    const head = h("div", "lvc-token-head");
    head.append(h("code", "lvc-token-text", visible(row.tokens[i])),
      h("span", "lvc-token-lp", ` ${percent(row.logprobs[i])} (logprob ${fmt(row.logprobs[i])}, rank ${row.ranks[i] || "?"})`));
    box.appendChild(head);
    const list = h("ol", "lvc-alts");
    const end = Math.min(row.altStart[i + 1], row.altStart[i] + ALTERNATIVES);
    for (let j = row.altStart[i]; j < end; j++) {
      const li = h("li", "lvc-alt");
      if (row.altTexts[j] === row.tokens[i]) li.classList.add("lvc-chosen");
      li.append(h("code", "lvc-alt-text", visible(row.altTexts[j])), h("span", "lvc-alt-p", ` ${percent(row.altLogprobs[j])}`));
      list.appendChild(li);
    }
    if (end > row.altStart[i]) box.appendChild(list);
    return box;
  }

  function showPinned() {
    const p = pinned();
    root.querySelectorAll(".lvc-pinned").forEach((e) => e.classList.remove("lvc-pinned"));
    if (p >= 0) spanEls.forEach((spans) => spans[p]?.classList.add("lvc-pinned"));
    lit = -2; // force the panel to be rebuilt
    highlight(p);
  }

  // ---- events ----

  const spanAt = (target) => {
    const spanEl = target instanceof Element ? target.closest(".lvc-span") : null;
    return spanEl && root.contains(spanEl) ? Number(spanEl.dataset.span) : -1;
  };
  const onOver = (e) => {
    const s = spanAt(e.target);
    if (s >= 0) highlight(s);
  };
  const onLeave = () => highlight(pinned());
  const onClick = (e) => {
    const s = spanAt(e.target);
    if (s < 0) return;
    model.set("selected", s === pinned() ? -1 : s);
    model.save_changes();
    root.focus({ preventScroll: true });
  };
  const onKey = (e) => {
    const p = pinned();
    let next = null;
    if (e.key === "Escape") next = -1;
    else if (e.key === "ArrowRight" && p >= 0) next = Math.min(p + 1, data.nSpans - 1);
    else if (e.key === "ArrowLeft" && p >= 0) next = Math.max(p - 1, 0);
    if (next === null) return;
    e.preventDefault();
    model.set("selected", next);
    model.save_changes();
  };

  function build() {
    data = decodeComparison(model.get("_payload"));
    lit = -1;
    spanBins = new Array(data.nSpans).fill(null);
    buildHeader();
    buildControls();
    buildRows();
    panel = h("div", "lvc-panel");
    root.replaceChildren(caption, header, controls, panel, rowsEl);
    rowsEl.addEventListener("mouseover", onOver);
    rowsEl.addEventListener("mouseleave", onLeave);
    rowsEl.addEventListener("click", onClick);
    paintDiff();
    paint();
    showPinned();
  }

  root.addEventListener("keydown", onKey);
  const onPayload = () => build();
  const onDiffRows = () => {
    paintDiff();
    onColor();
  };
  const onColor = () => {
    const [a, b] = model.get("diff_rows");
    const sels = controls.querySelectorAll("select");
    sels[0].value = model.get("color_mode");
    sels[1].value = String(a);
    sels[2].value = String(b);
    paint();
  };
  const onLabels = () => build();
  model.on("change:_payload", onPayload);
  model.on("change:labels", onLabels);
  model.on("change:selected", showPinned);
  model.on("change:color_mode", onColor);
  model.on("change:diff_rows", onDiffRows);
  model.on("change:diff_range", onDiffRows);
  build();

  return () => {
    model.off("change:_payload", onPayload);
    model.off("change:labels", onLabels);
    model.off("change:selected", showPinned);
    model.off("change:color_mode", onColor);
    model.off("change:diff_rows", onDiffRows);
    model.off("change:diff_range", onDiffRows);
    root.removeEventListener("keydown", onKey);
  };
}

export default { render };
