// The LogprobView: a trace's text as a heatmap of token probabilities. A header of statistics,
// a legend whose mode, palette and range can be changed, a per-token surprisal strip, the text,
// and the alternatives chart of the hovered or pinned token. Token text from the model is
// always inserted as text (textContent / text nodes), never as HTML: a token can be `<script>`.
//
// The trace lives on the model (`initialize`), shared by every view of it: the `_payload` trait
// replaces it, an "append" custom message from the kernel grows it (js/payload.js), and each
// view adds the new tokens' spans without rebuilding.

import "./widget.css";
import { buildChart, panelEstimate, ROW_PX, tallest } from "./chart.js";
import { scale, tokenStyle } from "./colors.js";
import { headerText } from "./format.js";
import { buildLegend } from "./legend.js";
import { leastConfident } from "./stats.js";
import { storeOf } from "./store.js";
import { Strip } from "./strip.js";
import { h, inSlices, paint, TokenText, tokenSpan } from "./text.js";

const FIRST_SLICE = 300; // tokens built before the view first shows; the rest follows in slices
const SLICE = 400;
const JUMPS = 20; // how many least-confident tokens the jump button cycles through

function initialize({ model }) {
  const store = storeOf(model);
  return () => store.dispose();
}

function render({ model, el }) {
  const store = storeOf(model);
  const root = h("div", model.get("forks") !== undefined ? "lv-root lv-branchable" : "lv-root");
  root.tabIndex = 0;
  el.appendChild(root);

  let data = null;
  let sc = null; // the colour scale
  let text = null; // the TokenText
  let cancelBuild = () => {};
  let cancelPaint = () => {};
  let shown = -1; // index whose chart is on screen
  let activeEl = null;
  let pinnedEl = null;
  let jumps = null; // the least-confident tokens, least confident first
  let jumpAt = -1;
  let visibility = null; // the IntersectionObserver of long texts' blocks
  let header, legend, strip, textEl, panel, placeholder, jumpBtn, hoverBox;
  let sized = false; // whether the panel's height was measured (see sizePanel)
  let forks = new Set(model.get("forks") ?? []); // the explorer's fork points (ExplorerView.forks)

  const pinned = () => {
    const s = model.get("selected");
    return data && s >= 0 && s < data.n ? s : -1;
  };
  const newScale = () => scale(model.get("color_mode"), model.get("palette"), model.get("color_range"));
  const spanOf = (i) => (text && i >= 0 && i < text.built ? text.spans[i] : null);

  // ---- chart and highlight ----

  function showChart(i, force = false) {
    if (!data || (i === shown && !force)) return;
    shown = i;
    const chart =
      i >= 0
        ? buildChart(data, i, {
            promptLen: data.promptLen,
            showIds: model.get("show_ids"),
            style: tokenStyle(sc, data, i),
            pinned: i === pinned(),
            flags: data.flagNotes[String(i)],
          })
        : placeholder;
    markActive(i); // first: it reads the text's layout, still clean before the chart changes
    panel.replaceChildren(chart);
    strip.mark(i, data.n);
  }

  /**
   * Outline token i with the hover box: a layer of its own over the text, moved by a transform, so
   * the text (10,000s of spans) is not repainted on hover. The span keeps the `lv-active` class.
   */
  function markActive(i) {
    if (activeEl) activeEl.classList.remove("lv-active");
    activeEl = spanOf(i);
    if (!activeEl) {
      hoverBox.style.display = "none";
      return;
    }
    const box = textEl.getBoundingClientRect();
    const r = activeEl.getBoundingClientRect();
    const x = r.left - box.left + textEl.scrollLeft - textEl.clientLeft;
    const y = r.top - box.top + textEl.scrollTop - textEl.clientTop;
    Object.assign(hoverBox.style, { display: "", width: `${r.width}px`, height: `${r.height}px`, transform: `translate(${x}px, ${y}px)` });
    activeEl.classList.add("lv-active");
  }

  function markPinned() {
    if (!data) return;
    if (pinnedEl) pinnedEl.classList.remove("lv-pinned");
    pinnedEl = spanOf(pinned());
    if (pinnedEl) pinnedEl.classList.add("lv-pinned");
    showChart(pinned(), true);
  }

  function setSelected(i) {
    model.set("selected", i);
    model.save_changes();
  }

  function setTraits(values) {
    for (const [k, v] of Object.entries(values)) model.set(k, v);
    model.save_changes();
  }

  /** Scroll the text box (not the page) so token i is in view. */
  function reveal(i) {
    const span = spanOf(i);
    if (!span) return;
    const blockEl = span.closest(".lv-offscreen");
    if (blockEl) blockEl.classList.remove("lv-offscreen"); // laid out now, to be measured
    const box = textEl.getBoundingClientRect();
    const r = span.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) textEl.scrollTop += r.top - box.top - textEl.clientHeight / 2;
  }

  /**
   * Give the panel the height of the tallest chart this trace can show (K alternatives, a gap and
   * the chosen token outside the top K, pinned), measured once from a hidden chart: hovering then
   * never changes the widget's size. False when the view is not laid out yet (measured on resize).
   */
  function sizePanel() {
    const chart = buildChart(data, tallest(data), { promptLen: data.promptLen, showIds: model.get("show_ids"), style: null, pinned: true });
    chart.style.visibility = "hidden";
    const shownNow = [...panel.childNodes];
    panel.replaceChildren(chart);
    const height = chart.getBoundingClientRect().height;
    const rows = chart.querySelectorAll(".lv-alt-row");
    const row = rows.length ? rows[0].getBoundingClientRect().height : ROW_PX;
    const css = getComputedStyle(panel);
    const frame = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"].reduce((sum, k) => sum + (parseFloat(css[k]) || 0), 0);
    panel.replaceChildren(...shownNow);
    if (!height) return false;
    // Rows the measured chart lacks: up to K alternatives, the gap, the chosen token outside the top K and its rank line.
    const missing = data.k === 0 ? 0 : Math.max(0, data.k + 3 - rows.length - 2 * chart.querySelectorAll(".lv-alt-gap").length);
    panel.style.height = `${Math.ceil(height + missing * row + frame)}px`;
    panel.classList.add("lv-sized"); // (tests wait for it)
    return true;
  }

  // ---- building the view ----

  function recolor() {
    if (!data) return;
    sc = newScale();
    buildLegend(legend, sc, model, setTraits);
    cancelPaint();
    cancelPaint = inSlices(text.built, 4 * SLICE, (start, end) => {
      for (let i = start; i < end; i++) paint(text.spans[i], tokenStyle(sc, data, i));
    });
    showChart(shown, true);
  }

  function makeSpan(i) {
    const span = tokenSpan(data.shown[i], i, i < data.promptLen, tokenStyle(sc, data, i), data.splitOf(i));
    if (forks.has(i)) span.classList.add("lv-fork"); // a branch of the explorer starts here
    const flags = data.flagNotes[String(i)];
    if (flags) {
      span.classList.add("lv-flagged"); // the source lost something here: say what on hover
      span.title = flags.join("\n");
    }
    return span;
  }

  /** Add the spans of the tokens not built yet: `first` now, the rest in slices across tasks. */
  function extend(first) {
    cancelBuild();
    let timer = null;
    const step = (count) => {
      text.add(data, Math.min(data.n, text.built + count), makeSpan);
      if (text.built < data.n) {
        header.classList.add("lv-loading"); // on the header, not the root: restyling the root restyles every token
        timer = setTimeout(() => step(SLICE), 0);
      } else {
        timer = null;
        header.classList.remove("lv-loading");
        if (pinnedEl !== spanOf(pinned())) markPinned(); // a pinned token built only now
      }
    };
    step(first);
    cancelBuild = () => timer != null && clearTimeout(timer);
  }

  function build() {
    cancelBuild();
    cancelPaint();
    strip?.cancel();
    data = store.load();
    root.replaceChildren();
    shown = -1;
    activeEl = pinnedEl = null;
    if (!data) {
      root.appendChild(h("div", "lv-error", `logprob_viz: could not read the trace (${store.error})`));
      return;
    }
    sc = newScale();
    sized = false;
    jumps = null; // found on the first jump: opening the view does only what the first frame needs
    jumpAt = -1;

    const top = h("div", "lv-top");
    header = h("div", "lv-header", headerText(data));
    jumpBtn = h("button", "lv-jump", "least confident \u25b8");
    jumpBtn.type = "button";
    jumpBtn.title = `pin the ${JUMPS} least-confident tokens in turn, least confident first`;
    jumpBtn.hidden = data.n === 0;
    top.append(header, jumpBtn);
    legend = h("div", "lv-legend");
    buildLegend(legend, sc, model, setTraits);
    strip = new Strip();
    root.append(top, legend, strip.el);

    const body = h("div", "lv-body");
    textEl = h("div", "lv-text");
    hoverBox = h("div", "lv-hover-box");
    hoverBox.style.display = "none";
    textEl.appendChild(hoverBox);
    panel = h("div", "lv-panel");
    panel.style.height = `${panelEstimate(data)}px`; // hovering never changes the widget's size: see sizePanel
    placeholder = h("div", "lv-chart-empty", "Hover a token to see what the model was choosing between. Click to pin it.");
    panel.appendChild(placeholder);
    body.append(textEl, panel);
    root.appendChild(body);

    // Long texts: a block is laid out only while near the text box's view (content-visibility).
    if (visibility) visibility.disconnect();
    visibility =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver(
            (entries) => {
              for (const e of entries) e.target.classList.toggle("lv-offscreen", !e.isIntersecting);
            },
            { root: textEl, rootMargin: "400px 0px" },
          )
        : null;
    text = new TokenText(textEl, visibility ? (b) => visibility.observe(b) : null);
    if (data.n === 0) textEl.appendChild(h("span", "lv-chart-empty lv-empty-trace", "(empty trace)"));
    extend(FIRST_SLICE);
    measureLater();
    strip.schedule(data, model.get("palette"));
  }

  /** sizePanel once the first frame is laid out: then measuring lays out the (contained) panel only. */
  function measureLater() {
    const built = data;
    requestAnimationFrame(() =>
      setTimeout(() => {
        if (!sized && data === built && data.n > 0) sized = sizePanel();
      }, 0),
    );
  }

  /** New tokens from `start` on (a stream): keep the spans before it, add the rest. */
  function grow(start) {
    if (!data || data !== store.data) return build();
    if (start < text.built) {
      text.truncate(start);
      if (shown >= start) showChart(-1, true);
    }
    if (data.n > 0) textEl.querySelector(".lv-empty-trace")?.remove();
    jumps = null;
    jumpBtn.hidden = data.n === 0;
    header.textContent = headerText(data);
    extend(SLICE);
    if (!sized) measureLater();
    strip.schedule(data, model.get("palette"));
  }

  const onStore = (what, start) => (what === "grow" ? grow(start) : build());
  store.views.add(onStore);

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
  const onMove = (e) => {
    if (!data || !data.n || !strip.el.contains(e.target)) return;
    const i = strip.indexAt(e, data.n);
    reveal(i); // first: the hover box measures the token where it is laid out
    showChart(i);
  };
  const onClick = (e) => {
    if (!data) return;
    if (e.target === jumpBtn) {
      jumps ??= leastConfident(data.logprobs, JUMPS);
      if (!jumps.length) return;
      jumpAt = (jumpAt + 1) % jumps.length;
      jumpBtn.textContent = `least confident ${jumpAt + 1}/${jumps.length} \u25b8`;
      reveal(jumps[jumpAt]);
      setSelected(jumps[jumpAt]);
      return;
    }
    if (strip.el.contains(e.target)) {
      const i = strip.indexAt(e, data.n);
      reveal(i);
      setSelected(i);
      return;
    }
    const alt = e.target instanceof Element && panel.contains(e.target) ? e.target.closest(".lv-alt-row:not(.lv-extra)") : null;
    if (alt && shown >= 0 && model.get("forks") !== undefined) {
      // The explorer branches here: the kernel gets the position and the alternative (ExplorerView).
      const j = [...alt.parentNode.children].filter((r) => r.matches(".lv-alt-row:not(.lv-extra)")).indexOf(alt);
      model.send({ event: "alternative", at: shown, token_id: data.altId(shown, j), token: data.altText(shown, j) });
      return;
    }
    const i = tokenIndex(e.target);
    if (i >= 0) setSelected(pinned() === i ? -1 : i);
  };
  const onForks = () => {
    forks = new Set(model.get("forks") ?? []);
    if (text) text.spans.forEach((span, i) => span.classList.toggle("lv-fork", forks.has(i)));
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
      reveal(next);
      setSelected(next);
    } else if (e.key === "b" && p >= 0 && data && model.get("forks") !== undefined) {
      // The explorer branches from the pinned token: the alternative under the pointer, else the likeliest not chosen.
      let j = shown === p ? [...panel.querySelectorAll(".lv-alt-row:not(.lv-extra)")].findIndex((r) => r.matches(":hover")) : -1;
      for (let a = 0; j < 0 && a < data.topCount(p); a++) if (data.altId(p, a) !== data.tokenIds[p]) j = a;
      if (j >= 0) model.send({ event: "alternative", at: p, token_id: data.altId(p, j), token: data.altText(p, j) });
    } else return;
    e.preventDefault();
    e.stopPropagation();
  };
  root.addEventListener("mouseover", onOver);
  root.addEventListener("mouseleave", onLeave, true);
  root.addEventListener("click", onClick);
  root.addEventListener("keydown", onKey);
  root.addEventListener("mousemove", onMove);
  const redrawStrip = () => data && strip.schedule(data, model.get("palette"));
  const onResize = () => {
    if (data && data.n > 0 && !sized) measureLater(); // laid out now (it was detached): measure after this frame
    if (activeEl) markActive(shown); // the text re-flowed: the hover box follows its token
    redrawStrip();
  };
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(onResize) : null;
  if (resize) resize.observe(root);

  const handlers = [
    ["change:selected", markPinned],
    ["change:color_mode", recolor],
    ["change:palette", () => (recolor(), redrawStrip())],
    ["change:color_range", recolor],
    ["change:show_ids", () => showChart(shown, true)],
    ["change:forks", onForks],
  ];
  for (const [name, fn] of handlers) model.on(name, fn);
  // Build in a task of its own, not inside the one that delivered the widget's (large) state.
  const initial = setTimeout(build, 0);

  return () => {
    clearTimeout(initial);
    cancelBuild();
    cancelPaint();
    strip?.cancel();
    store.views.delete(onStore);
    for (const [name, fn] of handlers) model.off(name, fn);
    if (resize) resize.disconnect();
    if (visibility) visibility.disconnect();
    root.remove();
  };
}

export default { initialize, render };
