// The LogprobView: a trace's text as a heatmap of token probabilities; hovering a token shows
// a bar chart of the alternatives the model weighed. Token text from the model is always
// inserted as text (textContent / text nodes), never as HTML: a token can be `<script>`.

import "./widget.css";
import {
  alternatives,
  controlGlyph,
  decodePayload,
  formatLogprob,
  formatPercent,
  formatStat,
  segments,
  tokenColors,
  viridisGradient,
} from "./lib.js";

/** Create an element with classes (and, optionally, plain text). Never parses HTML. */
function h(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text != null) el.textContent = text;
  return el;
}

/**
 * Append `text` to `parent` with its whitespace made visible. Each space, tab and newline is a
 * span holding the real character (so copying gives the original text) and showing a glyph
 * through CSS: `·` over a space, `→` for a tab, `↵` before a newline, which then breaks the line.
 */
export function appendText(parent, text) {
  if (text === "") {
    parent.appendChild(h("span", "lv-ws lv-empty"));
    return;
  }
  for (const seg of segments(text)) {
    switch (seg.kind) {
      case "text":
        parent.appendChild(document.createTextNode(seg.text));
        break;
      case "space":
        parent.appendChild(h("span", "lv-ws lv-sp", seg.text));
        break;
      case "tab":
        parent.appendChild(h("span", "lv-ws lv-tab", seg.text));
        break;
      case "newline":
        parent.appendChild(h("span", "lv-ws lv-nl", seg.text));
        break;
      default: {
        // "\r" and other control characters: a glyph, with the raw character kept but not drawn.
        const span = h("span", `lv-ws lv-ctrl${seg.kind === "cr" ? " lv-cr" : ""}`);
        span.setAttribute("data-glyph", seg.kind === "cr" ? "\u240d" : controlGlyph(seg.text));
        span.appendChild(h("span", "lv-raw", seg.text));
        parent.appendChild(span);
      }
    }
  }
}

function buildLegend() {
  const legend = h("div", "lv-legend");
  legend.appendChild(h("span", "lv-legend-title", "probability"));
  const scale = h("div", "lv-legend-scale");
  const bar = h("div", "lv-legend-bar");
  bar.style.background = viridisGradient();
  scale.appendChild(bar);
  const ticks = h("div", "lv-legend-ticks");
  for (const t of ["0%", "25%", "50%", "75%", "100%"]) ticks.appendChild(h("span", null, t));
  scale.appendChild(ticks);
  legend.appendChild(scale);
  const unknown = h("span", "lv-legend-item");
  unknown.appendChild(h("span", "lv-swatch lv-swatch-unknown"));
  unknown.appendChild(document.createTextNode("unknown"));
  legend.appendChild(unknown);
  const prompt = h("span", "lv-legend-item");
  prompt.appendChild(h("span", "lv-swatch lv-swatch-prompt"));
  prompt.appendChild(document.createTextNode("prompt"));
  legend.appendChild(prompt);
  return legend;
}

function headerText(model, n) {
  const promptLen = model.get("prompt_len");
  const parts = [
    `${n} tokens (${promptLen} prompt, ${n - promptLen} completion)`,
    `perplexity ${formatStat(model.get("perplexity"), 2)}`,
    `mean logprob ${formatStat(model.get("mean_logprob"), 3)}`,
  ];
  const meta = model.get("meta") || {};
  if (meta.model) parts.push(String(meta.model));
  if (meta.source) parts.push(String(meta.source));
  return parts.join(" \u00b7 ");
}

function altRow(row, maxRank) {
  const el = h("div", `lv-alt-row${row.chosen ? " lv-chosen" : ""}${row.rank != null ? " lv-extra" : ""}`);
  const token = h("span", "lv-alt-token");
  appendText(token, row.text);
  token.title = row.text; // the whole text when it is cut short (a property: plain text)
  el.appendChild(token);
  const p = Math.exp(row.logprob);
  const bar = h("span", "lv-alt-bar");
  const fill = h("span", "lv-alt-fill");
  fill.style.width = `${Number.isFinite(p) ? Math.max(0, Math.min(1, p)) * 100 : 0}%`;
  bar.appendChild(fill);
  if (row.processed != null && !Number.isNaN(row.processed)) {
    const proc = h("span", "lv-alt-fill lv-alt-fill-processed");
    proc.style.width = `${Math.max(0, Math.min(1, Math.exp(row.processed))) * 100}%`;
    proc.title = `sampled from: ${formatPercent(Math.exp(row.processed))}`;
    bar.appendChild(proc);
  }
  el.appendChild(bar);
  el.appendChild(h("span", "lv-alt-prob", formatPercent(p)));
  el.appendChild(h("span", "lv-alt-logprob", formatLogprob(row.logprob)));
  if (row.rank != null) {
    el.appendChild(h("span", "lv-alt-rank", row.rank > 0 ? `rank ${row.rank}, outside the top ${maxRank}` : `outside the top ${maxRank}`));
  }
  return el;
}

function buildChart(data, i, meta) {
  const chart = h("div", "lv-chart");
  chart.setAttribute("data-index", String(i));
  const isPrompt = i < meta.promptLen;

  const title = h("div", "lv-chart-title");
  const chip = h("span", "lv-chip");
  appendText(chip, data.tokens[i]);
  const colors = tokenColors(data.logprobs[i]);
  if (colors) {
    chip.style.background = colors.background;
    chip.style.color = colors.color;
  }
  title.appendChild(chip);
  title.appendChild(h("span", "lv-chart-where", `token ${i + 1} of ${data.n} \u00b7 ${isPrompt ? "prompt" : "completion"}`));
  chart.appendChild(title);

  const stats = h("div", "lv-chart-stats");
  const lp = data.logprobs[i];
  stats.appendChild(h("span", "lv-stat", `p ${formatPercent(Math.exp(lp))}`));
  stats.appendChild(h("span", "lv-stat", `logprob ${formatLogprob(lp)}`));
  const rank = data.ranks[i];
  stats.appendChild(h("span", "lv-stat lv-rank", rank > 0 ? `rank ${rank}` : "rank ?"));
  const ent = data.entropy[i];
  if (!Number.isNaN(ent)) stats.appendChild(h("span", "lv-stat lv-entropy", `entropy ${ent.toFixed(2)} nats`));
  chart.appendChild(stats);

  const { rows, extra } = alternatives(data, i);
  if (rows.length === 0 && !extra) {
    chart.appendChild(h("div", "lv-chart-empty", data.k === 0 ? "No alternatives were recorded (top_logprobs=0)." : "No alternatives for this token."));
    return chart;
  }
  const table = h("div", "lv-alts");
  const head = h("div", "lv-alt-head");
  for (const label of [`top ${data.k}`, "", "prob", "logprob"]) head.appendChild(h("span", null, label));
  table.appendChild(head);
  for (const row of rows) table.appendChild(altRow(row, data.k));
  if (extra) {
    table.appendChild(h("div", "lv-alt-gap", "\u22ef"));
    table.appendChild(altRow(extra, data.k));
  }
  chart.appendChild(table);
  if (data.processedTopLogprobs) {
    chart.appendChild(h("div", "lv-chart-note", "thin bars: the distribution actually sampled from (after temperature / top-p / top-k)"));
  }
  return chart;
}

function render({ model, el }) {
  const root = h("div", "lv-root");
  root.tabIndex = 0;
  el.appendChild(root);

  let data = null;
  let tokenEls = [];
  let shown = -1; // index whose chart is on screen
  let activeEl = null; // its token
  let pinnedEl = null; // the pinned token
  let body, header, textEl, panel, placeholder;

  const pinned = () => {
    const s = model.get("selected");
    return data && s >= 0 && s < data.n ? s : -1;
  };

  function showChart(i) {
    if (!data || i === shown) return;
    shown = i;
    panel.replaceChildren(i >= 0 ? buildChart(data, i, { promptLen: model.get("prompt_len") }) : placeholder);
    if (i >= 0 && i === pinned()) panel.firstChild.appendChild(h("div", "lv-chart-note lv-pin-note", "pinned \u00b7 click the token again or press Esc to release"));
    if (activeEl) activeEl.classList.remove("lv-active");
    activeEl = i >= 0 ? tokenEls[i] : null;
    if (activeEl) activeEl.classList.add("lv-active");
  }

  function markPinned() {
    if (!data) return;
    if (pinnedEl) pinnedEl.classList.remove("lv-pinned");
    const p = pinned();
    pinnedEl = p >= 0 ? tokenEls[p] : null;
    if (pinnedEl) pinnedEl.classList.add("lv-pinned");
    shown = -2; // force a redraw (the pin note changes)
    showChart(p);
  }

  function select(i) {
    model.set("selected", i);
    model.save_changes();
  }

  function build() {
    let error = null;
    try {
      data = decodePayload(model.get("_payload"));
    } catch (e) {
      data = null;
      error = e;
    }
    root.replaceChildren();
    shown = -1;
    activeEl = pinnedEl = null;
    if (!data) {
      root.appendChild(h("div", "lv-error", `logprob_viz: could not read the trace (${error})`));
      return;
    }
    header = h("div", "lv-header", headerText(model, data.n));
    root.appendChild(header);
    root.appendChild(buildLegend());

    body = h("div", "lv-body");
    textEl = h("div", "lv-text");
    const promptLen = model.get("prompt_len");
    tokenEls = new Array(data.n);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < data.n; i++) {
      if (i === 0 && promptLen > 0) frag.appendChild(h("span", "lv-part-label", "prompt"));
      if (i === promptLen && i > 0) frag.appendChild(h("span", "lv-part-label lv-part-completion", "completion"));
      const span = h("span", i < promptLen ? "lv-token lv-prompt" : "lv-token");
      span.setAttribute("data-index", String(i));
      appendText(span, data.tokens[i]);
      const colors = tokenColors(data.logprobs[i]);
      if (colors) {
        span.style.background = colors.background;
        span.style.color = colors.color;
      } else {
        span.classList.add("lv-unknown");
      }
      tokenEls[i] = span;
      frag.appendChild(span);
    }
    if (data.n === 0) frag.appendChild(h("span", "lv-chart-empty", "(empty trace)"));
    textEl.appendChild(frag);
    body.appendChild(textEl);

    panel = h("div", "lv-panel");
    placeholder = h("div", "lv-chart-empty", data.n ? "Hover a token to see what the model was choosing between. Click to pin it." : "");
    panel.appendChild(placeholder);
    body.appendChild(panel);
    root.appendChild(body);
    markPinned();
  }

  const tokenIndex = (target) => {
    const t = target instanceof Element ? target.closest(".lv-token") : null;
    return t && root.contains(t) ? Number(t.getAttribute("data-index")) : -1;
  };
  const onOver = (e) => {
    const i = tokenIndex(e.target);
    if (i >= 0) showChart(i);
  };
  const onLeave = (e) => {
    if (!e.target.classList || !e.target.classList.contains("lv-text")) return;
    const p = pinned();
    if (p >= 0) showChart(p);
  };
  const onClick = (e) => {
    const i = tokenIndex(e.target);
    if (i >= 0) select(pinned() === i ? -1 : i);
  };
  const onKey = (e) => {
    const p = pinned();
    if (e.key === "Escape" && p >= 0) select(-1);
    else if ((e.key === "ArrowRight" || e.key === "ArrowLeft") && data && data.n) {
      const start = p >= 0 ? p : shown >= 0 ? shown : 0;
      select(Math.max(0, Math.min(data.n - 1, start + (e.key === "ArrowRight" ? 1 : -1))));
    } else return;
    e.preventDefault();
    e.stopPropagation();
  };
  root.addEventListener("mouseover", onOver);
  root.addEventListener("mouseleave", onLeave, true);
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);

  const onHeader = () => {
    if (header && data) header.textContent = headerText(model, data.n);
  };
  model.on("change:_payload", build);
  model.on("change:prompt_len", build);
  model.on("change:selected", markPinned);
  model.on("change:perplexity", onHeader);
  model.on("change:mean_logprob", onHeader);
  model.on("change:meta", onHeader);
  build();

  return () => {
    model.off("change:_payload", build);
    model.off("change:prompt_len", build);
    model.off("change:selected", markPinned);
    model.off("change:perplexity", onHeader);
    model.off("change:mean_logprob", onHeader);
    model.off("change:meta", onHeader);
    root.removeEventListener("mouseover", onOver);
    root.removeEventListener("mouseleave", onLeave, true);
    root.removeEventListener("click", onClick);
    root.removeEventListener("keydown", onKey);
    root.remove();
  };
}

export default { render };
