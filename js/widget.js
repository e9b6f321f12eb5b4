// The LogprobView: a trace's text as a heatmap of token probabilities. A header of statistics,
// a legend whose mode, palette and range can be changed, a per-token surprisal strip, the text,
// and the alternatives chart of the hovered or pinned token. Token text from the model is
// always inserted as text (textContent / text nodes), never as HTML: a token can be `<script>`.

import "./widget.css";
import { buildChart } from "./chart.js";
import { gradient, MODES, PALETTES, RANK_BUCKETS, scale, ticks, tokenStyle } from "./colors.js";
import { decodePayload, formatStat } from "./lib.js";
import { leastConfident, stripBins, stripIndex, stripX } from "./stats.js";
import { blockEnds, h, inSlices, paint, tokenSpan } from "./text.js";

const FIRST_SLICE = 300; // tokens built before the view first shows; the rest follows in slices
const SLICE = 400;
const JUMPS = 20; // how many least-confident tokens the jump button cycles through

function headerParts(model, n) {
  const promptLen = model.get("prompt_len");
  const parts = [
    `${n} tokens (${promptLen} prompt, ${n - promptLen} completion)`,
    `perplexity ${formatStat(model.get("perplexity"), 2)}`,
    `mean logprob ${formatStat(model.get("mean_logprob"), 3)}`,
    `mean entropy ${formatStat(model.get("mean_entropy"), 2)} nats`,
  ];
  const meta = model.get("meta") || {};
  if (meta.model) parts.push(String(meta.model));
  if (meta.source) parts.push(String(meta.source));
  return parts.join(" \u00b7 ");
}

function select(options, value, className, onChange) {
  const el = h("select", className);
  for (const [v, label] of options) {
    const opt = h("option", null, label);
    opt.value = v;
    el.appendChild(opt);
  }
  el.value = value;
  el.addEventListener("change", () => onChange(el.value));
  return el;
}

function render({ model, el }) {
  const root = h("div", "lv-root");
  root.tabIndex = 0;
  el.appendChild(root);

  let data = null;
  let sc = null; // the colour scale
  let tokenEls = [];
  let built = 0; // tokens whose span exists
  let cancelBuild = () => {};
  let cancelPaint = () => {};
  let shown = -1; // index whose chart is on screen
  let activeEl = null;
  let pinnedEl = null;
  let jumps = null; // the least-confident tokens, least confident first
  let jumpAt = -1;
  let visibility = null; // the IntersectionObserver of long texts' blocks
  let header, legend, strip, stripCanvas, stripMarker, textEl, panel, placeholder, jumpBtn;

  const pinned = () => {
    const s = model.get("selected");
    return data && s >= 0 && s < data.n ? s : -1;
  };
  const newScale = () => scale(model.get("color_mode"), model.get("palette"), model.get("color_range"));

  // ---- chart and highlight ----

  function showChart(i, force = false) {
    if (!data || (i === shown && !force)) return;
    shown = i;
    panel.replaceChildren(
      i >= 0
        ? buildChart(data, i, {
            promptLen: model.get("prompt_len"),
            showIds: model.get("show_ids"),
            style: tokenStyle(sc, data, i),
            pinned: i === pinned(),
            flags: (model.get("flag_notes") || {})[String(i)],
          })
        : placeholder,
    );
    if (activeEl) activeEl.classList.remove("lv-active");
    activeEl = i >= 0 && i < built ? tokenEls[i] : null;
    if (activeEl) activeEl.classList.add("lv-active");
    moveStripMarker(i);
  }

  function markPinned() {
    if (!data) return;
    if (pinnedEl) pinnedEl.classList.remove("lv-pinned");
    const p = pinned();
    pinnedEl = p >= 0 && p < built ? tokenEls[p] : null;
    if (pinnedEl) pinnedEl.classList.add("lv-pinned");
    showChart(p, true);
  }

  function setSelected(i) {
    model.set("selected", i);
    model.save_changes();
  }

  /** Scroll the text box (not the page) so token i is in view. */
  function reveal(i) {
    const span = i >= 0 && i < built ? tokenEls[i] : null;
    if (!span) return;
    const blockEl = span.closest(".lv-offscreen");
    if (blockEl) blockEl.classList.remove("lv-offscreen"); // laid out now, to be measured
    const box = textEl.getBoundingClientRect();
    const r = span.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) textEl.scrollTop += r.top - box.top - textEl.clientHeight / 2;
  }

  // ---- legend ----

  function buildLegend() {
    legend.replaceChildren();
    const controls = h("span", "lv-legend-controls");
    const modes = Object.entries(MODES).map(([k, m]) => [k, m.label]);
    controls.appendChild(select(modes, model.get("color_mode"), "lv-mode", (v) => setTraits({ color_mode: v, color_range: null })));
    if (sc.range) {
      const palettes = Object.keys(PALETTES).map((p) => [p, p]);
      controls.appendChild(select(palettes, model.get("palette"), "lv-palette", (v) => setTraits({ palette: v })));
    }
    legend.appendChild(controls);
    if (sc.range) {
      const wrap = h("span", "lv-legend-range");
      const bound = (value, cls, which) => {
        const input = h("input", cls);
        input.type = "number";
        input.step = "any";
        input.value = String(value);
        input.title = which === 0 ? "legend minimum" : "legend maximum";
        input.addEventListener("change", () => {
          const next = [...sc.range];
          next[which] = Number(input.value);
          if (Number.isFinite(next[which]) && next[1] > next[0]) setTraits({ color_range: next });
          else input.value = String(sc.range[which]);
        });
        return input;
      };
      wrap.appendChild(bound(sc.range[0], "lv-range-lo", 0));
      const scaleEl = h("div", "lv-legend-scale");
      const bar = h("div", "lv-legend-bar");
      bar.style.background = gradient(sc);
      scaleEl.appendChild(bar);
      const tickEl = h("div", "lv-legend-ticks");
      for (const t of ticks(sc)) tickEl.appendChild(h("span", null, t));
      scaleEl.appendChild(tickEl);
      wrap.appendChild(scaleEl);
      wrap.appendChild(bound(sc.range[1], "lv-range-hi", 1));
      legend.appendChild(wrap);
    } else {
      for (const b of RANK_BUCKETS) {
        const item = h("span", "lv-legend-item lv-bucket");
        const sw = h("span", "lv-swatch");
        sw.style.background = `rgb(${b.rgb.join(",")})`;
        item.appendChild(sw);
        item.appendChild(document.createTextNode(b.label));
        legend.appendChild(item);
      }
    }
    for (const [cls, label] of [["lv-swatch-unknown", "unknown"], ["lv-swatch-prompt", "prompt"]]) {
      const item = h("span", "lv-legend-item");
      item.appendChild(h("span", `lv-swatch ${cls}`));
      item.appendChild(document.createTextNode(label));
      legend.appendChild(item);
    }
  }

  function setTraits(values) {
    for (const [k, v] of Object.entries(values)) model.set(k, v);
    model.save_changes();
  }

  // ---- surprisal strip ----

  function drawStrip() {
    if (!data || !stripCanvas) return;
    const width = Math.max(1, Math.floor(strip.clientWidth));
    const height = 18;
    const dpr = window.devicePixelRatio || 1;
    stripCanvas.width = width * dpr;
    stripCanvas.height = height * dpr;
    stripCanvas.style.height = `${height}px`;
    const ctx = stripCanvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const bins = stripBins(data.logprobs, Math.min(width, Math.max(1, data.n)));
    const colors = scale("logprob", model.get("palette"));
    const bw = width / bins.length;
    for (let b = 0; b < bins.length; b++) {
      const s = bins[b];
      if (Number.isNaN(s)) continue;
      const hgt = Math.max(2, Math.min(1, s / 10) * height);
      ctx.fillStyle = `rgb(${colors.rgb(s).join(",")})`;
      ctx.fillRect(b * bw, height - hgt, Math.max(1, bw - (bw > 3 ? 1 : 0)), hgt);
    }
    moveStripMarker(shown);
  }

  function moveStripMarker(i) {
    if (!stripMarker || !data) return;
    stripMarker.style.display = i >= 0 ? "" : "none";
    if (i >= 0) stripMarker.style.left = `${stripX(i, 100, data.n)}%`; // no layout read: hover stays cheap
  }

  const stripAt = (e) => stripIndex(e.clientX - strip.getBoundingClientRect().left, strip.clientWidth, data.n);

  // ---- building the view ----

  function paintFrom(start, end) {
    for (let i = start; i < end; i++) paint(tokenEls[i], tokenStyle(sc, data, i));
  }

  function recolor() {
    if (!data) return;
    sc = newScale();
    buildLegend();
    cancelPaint();
    cancelPaint = inSlices(built, 4 * SLICE, paintFrom);
    showChart(shown, true);
  }

  function build() {
    cancelBuild();
    cancelPaint();
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
    built = 0;
    if (!data) {
      root.appendChild(h("div", "lv-error", `logprob_viz: could not read the trace (${error})`));
      return;
    }
    sc = newScale();
    jumps = null; // found on the first jump: opening the view does only what the first frame needs
    jumpAt = -1;

    const top = h("div", "lv-top");
    header = h("div", "lv-header", headerParts(model, data.n));
    top.appendChild(header);
    jumpBtn = h("button", "lv-jump", "least confident \u25b8");
    jumpBtn.type = "button";
    jumpBtn.title = `pin the ${JUMPS} least-confident tokens in turn, least confident first`;
    jumpBtn.hidden = data.n === 0;
    top.appendChild(jumpBtn);
    root.appendChild(top);
    legend = h("div", "lv-legend");
    buildLegend();
    root.appendChild(legend);

    strip = h("div", "lv-strip");
    strip.title = "surprisal of every token (the highest in each pixel); hover to find it in the text";
    stripCanvas = h("canvas", "lv-strip-canvas");
    stripMarker = h("div", "lv-strip-marker");
    stripMarker.style.display = "none";
    strip.appendChild(stripCanvas);
    strip.appendChild(stripMarker);
    root.appendChild(strip);

    const body = h("div", "lv-body");
    textEl = h("div", "lv-text");
    body.appendChild(textEl);
    panel = h("div", "lv-panel");
    placeholder = h("div", "lv-chart-empty", data.n ? "Hover a token to see what the model was choosing between. Click to pin it." : "");
    panel.appendChild(placeholder);
    body.appendChild(panel);
    root.appendChild(body);

    // Long texts: a block is laid out only while near the text box's view (content-visibility).
    if (visibility) visibility.disconnect();
    visibility = typeof IntersectionObserver === "function"
      ? new IntersectionObserver(
          (entries) => {
            for (const e of entries) e.target.classList.toggle("lv-offscreen", !e.isIntersecting);
          },
          { root: textEl, rootMargin: "400px 0px" },
        )
      : null;
    const promptLen = model.get("prompt_len");
    const flagNotes = model.get("flag_notes") || {};
    tokenEls = new Array(data.n);
    const ends = blockEnds(data.tokens);
    let block = 0;
    let blockEl = null;
    const addTokens = (start, end) => {
      for (let i = start; i < end; i++) {
        if (!blockEl) {
          blockEl = h("div", ends.length > 1 ? "lv-block lv-block-long lv-offscreen" : "lv-block");
          textEl.appendChild(blockEl);
          if (visibility) visibility.observe(blockEl);
        }
        if (i === 0 && promptLen > 0) blockEl.appendChild(h("span", "lv-part-label", "prompt"));
        if (i === promptLen && i > 0) blockEl.appendChild(h("span", "lv-part-label lv-part-completion", "completion"));
        const span = tokenSpan(data.shown[i], i, i < promptLen, tokenStyle(sc, data, i), data.splitOf(i));
        const flags = flagNotes[String(i)];
        if (flags) {
          span.classList.add("lv-flagged"); // the source lost something here: say what on hover
          span.title = flags.join("\n");
        }
        tokenEls[i] = span;
        blockEl.appendChild(span);
        built = i + 1;
        if (built === ends[block]) {
          block += 1;
          blockEl = null;
        }
      }
    };
    if (data.n === 0) textEl.appendChild(h("span", "lv-chart-empty", "(empty trace)"));
    addTokens(0, Math.min(data.n, FIRST_SLICE));
    if (data.n > FIRST_SLICE) {
      header.classList.add("lv-loading"); // on the header, not the root: toggling a class on the root restyles 100,000 tokens
      const rest = data.n - FIRST_SLICE;
      cancelBuild = inSlices(rest, SLICE, (s, e) => addTokens(FIRST_SLICE + s, FIRST_SLICE + e), () => {
        header.classList.remove("lv-loading");
        markPinned();
      });
    }
    markPinned();
    requestAnimationFrame(drawStrip);
  }

  // ---- events, delegated to the root: one listener each, whatever the number of tokens ----

  const tokenIndex = (target) => {
    const t = target instanceof Element ? target.closest(".lv-token") : null;
    return t && root.contains(t) ? Number(t.getAttribute("data-index")) : -1;
  };
  const onOver = (e) => {
    const i = tokenIndex(e.target);
    if (i >= 0) showChart(i);
  };
  const onLeave = (e) => {
    if (!e.target.classList || !(e.target.classList.contains("lv-text") || e.target.classList.contains("lv-strip"))) return;
    showChart(pinned(), true);
  };
  const onStripMove = (e) => {
    if (!data || !data.n) return;
    const i = stripAt(e);
    showChart(i);
    reveal(i);
  };
  const onClick = (e) => {
    if (e.target === jumpBtn) {
      jumps ??= leastConfident(data.logprobs, JUMPS);
      if (!jumps.length) return;
      jumpAt = (jumpAt + 1) % jumps.length;
      jumpBtn.textContent = `least confident ${jumpAt + 1}/${jumps.length} \u25b8`;
      setSelected(jumps[jumpAt]);
      reveal(jumps[jumpAt]);
      return;
    }
    if (strip && strip.contains(e.target)) {
      const i = stripAt(e);
      setSelected(i);
      reveal(i);
      return;
    }
    const i = tokenIndex(e.target);
    if (i >= 0) setSelected(pinned() === i ? -1 : i);
  };
  const onKey = (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) {
      e.stopPropagation(); // typing in the legend is not a notebook shortcut
      return;
    }
    const p = pinned();
    if (e.key === "Escape" && p >= 0) setSelected(-1);
    else if ((e.key === "ArrowRight" || e.key === "ArrowLeft") && data && data.n) {
      const start = p >= 0 ? p : shown >= 0 ? shown : 0;
      const next = Math.max(0, Math.min(data.n - 1, start + (e.key === "ArrowRight" ? 1 : -1)));
      setSelected(next);
      reveal(next);
    } else return;
    e.preventDefault();
    e.stopPropagation();
  };
  root.addEventListener("mouseover", onOver);
  root.addEventListener("mouseleave", onLeave, true);
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  root.addEventListener("mousemove", (e) => {
    if (strip && strip.contains(e.target)) onStripMove(e);
  });
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(() => drawStrip()) : null;
  if (resize) resize.observe(root);

  const onHeader = () => {
    if (header && data) header.textContent = headerParts(model, data.n);
  };
  const onIds = () => showChart(shown, true);
  const handlers = [
    ["change:_payload", build],
    ["change:prompt_len", build],
    ["change:selected", markPinned],
    ["change:color_mode", recolor],
    ["change:palette", () => (recolor(), drawStrip())],
    ["change:color_range", recolor],
    ["change:show_ids", onIds],
    ["change:perplexity", onHeader],
    ["change:mean_logprob", onHeader],
    ["change:mean_entropy", onHeader],
    ["change:meta", onHeader],
  ];
  for (const [name, fn] of handlers) model.on(name, fn);
  // Build in a task of its own, not inside the one that delivered the widget's (large) state.
  const initial = setTimeout(build, 0);

  return () => {
    clearTimeout(initial);
    cancelBuild();
    cancelPaint();
    for (const [name, fn] of handlers) model.off(name, fn);
    if (resize) resize.disconnect();
    if (visibility) visibility.disconnect();
    root.remove();
  };
}

export default { render };
