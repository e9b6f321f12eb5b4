// The LogprobView: a trace's text as a heatmap of token probabilities. A header of statistics,
// a legend whose mode, palette and range can be changed, a per-token surprisal strip, the text,
// and the alternatives chart of the hovered or pinned token. Token text from the model is
// always inserted as text (textContent / text nodes), never as HTML: a token can be `<script>`.
//
// The trace lives on the model (`initialize`), shared by every view of it: the `_payload` trait
// replaces it, an "append" custom message from the kernel grows it (trace_data.js), and each
// view adds the new tokens' spans without rebuilding. One `LogprobRender` per output holds what
// that output shows; its events (events.js) and its chart panel (panel.js) are parts of their own.

import "./widget.css";
import "./explorer.css";
import "./overview.css";
import "./served.css";
import { h } from "../toolkit/dom.js";
import { whenIdle } from "../toolkit/idle.js";
import { panelEstimate } from "./chart.js";
import { listen } from "./events.js";
import { FORK_TITLE, listenAppKeys } from "./explorer.js";
import { ExplorerSide, hasSide } from "./explorer_side.js";
import { headerText } from "./header.js";
import { buildServed } from "./served.js";
import { buildLegend } from "./legend.js";
import { scale, tokenStyle } from "./modes.js";
import { ChartPanel } from "./panel.js";
import { storeOf } from "./store.js";
import { Stick } from "./stick.js";
import { Strip } from "./strip.js";
import { onDark, watchTheme } from "./theme_watch.js";
import { inSlices, paint, TokenText, tokenSpan } from "./text.js";
import { WINDOW_FROM } from "./block_window.js";
import { Why } from "./why.js";
import { decidedRange, withDecided } from "./decided.js";

const FIRST_SLICE = 300; // tokens built before the view first shows; the rest follows in slices
const SLICE = 400; // tokens added at once when a stream grows the text
const CHUNK = 50; // tokens per step of a slice in idle time, which goes on while the idle period lasts
const SLICE_MS = 8; // at most this long a slice (so a hover or a scroll between frames waits no longer)
// Up to this many tokens the view is built in render() itself, so its first frame shows it: the
// payload decodes in well under a millisecond and the first slice is the same at every length.
// A longer trace is built in a task of its own, not inside the one that delivered its (large) state
// (deferred, a 1k view waited a frame for its timer about one time in two: 15 to 98 ms to show).
const BUILD_AT_ONCE_MAX = 2000;

export const JUMPS = 20; // how many least-confident tokens the jump button cycles through

function initialize({ model }) {
  const store = storeOf(model);
  return () => store.dispose();
}

/** One output of the view: the trace's text, header, legend, strip and chart panel. */
export class LogprobRender {
  constructor(model, el) {
    this.model = model;
    this.store = storeOf(model);
    this.root = h("div", "lv-root");
    this.root.tabIndex = 0;
    this.root.classList.toggle("lv-branchable", !!model.get("branching"));
    this.root.classList.toggle("lv-size-projector", model.get("size") === "projector");
    el.appendChild(this.root);
    this.dark = false; // whether the background is dark (theme_watch.js): the palettes' ends follow it
    this.data = null; // the TraceData on show
    this.sc = null; // the colour scale
    this.text = null; // the TokenText
    this.cancelBuild = () => {};
    this.cancelPaint = () => {};
    this.pinnedEl = null;
    this.jumps = null; // the least-confident tokens, least confident first (found on the first jump)
    this.jumpAt = -1;
    this.visibility = null; // the IntersectionObserver of long texts' blocks
    this.forks = new Set(model.get("forks") ?? []); // fork points to mark (e.g. where branches start)
    this.why = new Why(this); // "why?": attribution colours (why.js)
    this.side = hasSide(model) ? new ExplorerSide(this) : null; // the explorer's sliders above the chart
  }

  get shown() {
    return this.panel ? this.panel.shown : -1;
  }

  /** The pinned token's index, -1 for none. */
  pinned() {
    const s = this.model.get("selected");
    return this.data && s >= 0 && s < this.data.n ? s : -1;
  }

  spanOf(i) {
    return this.text && i >= 0 && i < this.text.built ? this.text.spans[i] : null;
  }

  newScale() {
    const m = this.model;
    return scale(m.get("color_mode"), m.get("palette"), m.get("color_range") ?? decidedRange(m), this.dark); // decided.js
  }

  setSelected(i) {
    this.model.set("selected", i);
    this.model.save_changes();
  }

  setTraits(values) {
    for (const [k, v] of Object.entries(values)) this.model.set(k, v);
    this.model.save_changes();
  }

  showChart(i, force = false) {
    if (this.data) this.panel.show(this.data, i, force);
  }

  markPinned() {
    if (!this.data) return;
    if (this.pinnedEl) this.pinnedEl.classList.remove("lv-pinned");
    this.pinnedEl = this.spanOf(this.pinned());
    if (this.pinnedEl) this.pinnedEl.classList.add("lv-pinned");
    this.showChart(this.pinned(), true);
    this.why.onPin();
  }

  /** Scroll the text box (not the page) so token i is in view. */
  reveal(i) {
    const span = this.spanOf(i);
    if (!span) return;
    this.text.bringIn(i); // a long text: its block into the DOM first (block_window.js)
    const blockEl = span.closest(".lv-offscreen");
    if (blockEl) blockEl.classList.remove("lv-offscreen"); // laid out now, to be measured
    const box = this.textEl.getBoundingClientRect();
    const r = span.getBoundingClientRect();
    if (r.top < box.top || r.bottom > box.bottom) this.textEl.scrollTop += r.top - box.top - this.textEl.clientHeight / 2;
  }

  recolor() {
    if (!this.data) return;
    this.sc = this.newScale();
    buildLegend(this.legend, this.sc, this.model, (values) => this.setTraits(values));
    this.cancelPaint();
    const { data, sc, text } = this;
    this.cancelPaint = inSlices(text.built, 4 * SLICE, (start, end) => {
      for (let i = start; i < end; i++) paint(text.spans[i], tokenStyle(sc, data, i));
    });
    this.panel.invalidate(); // (the overview's tokens wear the text's colours)
    this.showChart(this.shown, true);
  }

  makeSpan(i) {
    const { data } = this;
    const span = tokenSpan(data.shown[i], i, i < data.promptLen, tokenStyle(this.sc, data, i), data.splitOf(i));
    if (this.forks.has(i)) span.classList.add("lv-fork"), (span.title = FORK_TITLE); // a branch starts here
    const flags = data.flagNotes[String(i)];
    if (flags) {
      span.classList.add("lv-flagged"); // the source lost something here: say what on hover
      span.title = flags.join("\n");
    }
    return span;
  }

  /**
   * Add the spans of the tokens not built yet: `first` now, the rest in slices in idle time
   * (`whenIdle`), so that no slice delays a frame: a hover or a scroll during the build of a long
   * text is painted in its own frame, not after the next 400 tokens' spans.
   * `paintFirst`: the slices start only once the frame with the first ones has been rendered, so
   * that opening the view paints the first screen of text without racing the rest of the build
   * (which, when some slices won the race, made a 1,000-token view slower to show than a 10,000:
   * a slice that ran between the first and the second frame delayed the second; in idle time none can).
   */
  extend(first, paintFirst = false) {
    this.cancelBuild();
    let cancelNext = null;
    let frame = 0;
    const step = (deadline) => {
      cancelNext = null;
      const end = (count) => Math.min(this.data.n, this.text.built + count);
      const make = (i) => this.makeSpan(i);
      if (deadline == null) this.text.add(this.data, end(first), make);
      else {
        const until = performance.now() + (deadline.didTimeout ? SLICE_MS : Math.min(SLICE_MS, deadline.timeRemaining()));
        do this.text.add(this.data, end(CHUNK), make);
        while (this.text.built < this.data.n && performance.now() < until);
      }
      // (a long text: the blocks that reached the view go in the DOM; measured after the first frame)
      this.text.refresh(!(paintFirst && deadline == null));
      if (this.text.built < this.data.n) {
        this.header.classList.add("lv-loading"); // on the header, not the root: restyling the root restyles every token
        const next = () => (cancelNext = whenIdle(step));
        if (paintFirst) frame = requestAnimationFrame(() => ((frame = 0), next()));
        else next();
      } else {
        this.header.classList.remove("lv-loading");
        if (this.pinnedEl !== this.spanOf(this.pinned())) this.markPinned(); // a pinned token built only now
        this.why.afterBuild();
      }
    };
    step(null);
    paintFirst = false;
    this.cancelBuild = () => {
      if (cancelNext) cancelNext();
      if (frame) cancelAnimationFrame(frame);
    };
  }

  /** The header, the jump button, the legend and the strip. */
  buildTop() {
    const top = h("div", "lv-top");
    this.header = h("div", "lv-header", headerText(this.data));
    this.jumpBtn = h("button", "lv-jump", "least confident \u25b8");
    this.jumpBtn.type = "button";
    this.jumpBtn.title = `pin the ${JUMPS} least-confident tokens in turn, least confident first`;
    this.jumpBtn.hidden = this.data.n === 0;
    top.append(this.header, this.jumpBtn);
    this.legend = h("div", "lv-legend");
    buildLegend(this.legend, this.sc, this.model, (values) => this.setTraits(values));
    this.strip = new Strip();
    this.root.append(...[top, buildServed(this), this.legend, this.strip.el].filter(Boolean)); // served.js
  }

  /** The text box and the chart panel beside it (in the explorer: its column, sliders above the chart). */
  buildBody() {
    const body = h("div", "lv-body");
    this.textEl = h("div", "lv-text");
    this.panel = new ChartPanel(this.textEl, panelEstimate(this.data), {
      showIds: () => this.model.get("show_ids"),
      style: (i) => tokenStyle(this.sc, this.data, i),
      pinned: () => this.pinned(),
      spanOf: (i) => this.spanOf(i),
      strip: this.strip,
      decorate: (chart, i, measuring) => this.why.decorate(chart, i, measuring),
      measureColumn: this.side ? () => ExplorerSide.widestColumn() : null,
      explorer: (i) => ({
        branching: !!this.model.get("branching"),
        explored: (this.model.get("explored") ?? {})[String(i)] ?? null,
        forced: (this.data.meta.forced ?? []).includes(i),
        // the pinned token's column under the sliders; elsewhere the trace's own (where it was sampled)
        column: (this.side && this.side.columnFor(i, this.data)) || undefined,
      }),
    });
    body.append(this.textEl, this.side ? this.side.hold(this.panel.el) : this.panel.el);
    this.root.appendChild(body);
    this.stick?.stop(); // the panel (the explorer's column, in its root's grid) follows the notebook's scroll
    this.stick = this.side ? new Stick(this.side.el, this.root) : new Stick(this.panel.el, body);
    // Long texts: a block is laid out only while near the text box's view (content-visibility).
    if (this.visibility) this.visibility.disconnect();
    this.visibility =
      typeof IntersectionObserver === "function"
        ? new IntersectionObserver(
            (entries) => {
              for (const e of entries) e.target.classList.toggle("lv-offscreen", !e.isIntersecting);
            },
            { root: this.textEl, rootMargin: "400px 0px" },
          )
        : null;
    this.text = new TokenText(this.textEl, this.visibility ? (b) => this.visibility.observe(b) : null);
    this.windowIfLong();
    if (this.data.n === 0) this.textEl.appendChild(h("span", "lv-chart-empty lv-empty-trace", "(empty trace)"));
  }

  build() {
    this.cancelBuild();
    this.cancelPaint();
    this.strip?.cancel();
    this.data = withDecided(this.store.load(), this.model); // the lens's "decided" layers (decided.js)
    this.root.replaceChildren();
    this.pinnedEl = null;
    if (!this.data) {
      this.root.appendChild(h("div", "lv-error", `logprob_viz: could not read the trace (${this.store.error})`));
      return;
    }
    this.sc = this.newScale();
    this.jumps = null; // found on the first jump: opening the view does only what the first frame needs
    this.jumpAt = -1;
    this.buildTop();
    this.buildBody();
    this.measureLater(true); // (first: after the first frame, before the next slice adds to the layout)
    this.extend(FIRST_SLICE, true);
  }

  /**
   * The panel's size, once the first frame is laid out: then measuring lays out the (contained)
   * panel only. In idle time after that frame, not in a task right behind it: the measure (a chart
   * built and laid out, 10-30 ms in a page's first view) then delays neither that frame's rendering
   * nor an input that arrives meanwhile, and still runs before the text's next slices (queued after it).
   * `first` (a view just built): first the strip, drawn in the next frame, and the trace's overview in
   * the panel (until a token is hovered or pinned) in idle time, which the first frame then lacks:
   * drawn with the text, the two cost a 1,000-token first render about 12 ms. Their boxes' sizes are
   * fixed (widget.css), so nothing moves when they come.
   */
  measureLater(first = false) {
    const built = this.data;
    const panel = this.panel;
    requestAnimationFrame(() => {
      if (first) this.redrawStrip();
      if (first) whenIdle(() => this.data === built && panel.shown === -1 && !panel.el.firstChild && panel.show(built, -1, true));
      whenIdle(() => this.data === built && built.n > 0 && panel.size(built));
    });
  }

  /** A long text: only the blocks near the view in the DOM, from now on (block_window.js). */
  windowIfLong() {
    if (this.data.n < WINDOW_FROM || this.text.window) return;
    this.visibility?.disconnect(); // (it would mark the blocks leaving the DOM as off screen)
    this.text.useWindow();
  }

  /** New tokens from `start` on (a stream): keep the spans before it, add the rest. */
  grow(start) {
    if (!this.data || this.data !== this.store.data) return this.build();
    this.panel.invalidate(); // the overview is of the trace as it is now
    if (start < this.text.built) {
      this.text.truncate(start);
      if (this.shown >= start) this.showChart(-1, true);
    }
    if (this.shown < 0) this.showChart(-1, true); // the overview on screen follows the stream
    if (this.data.n > 0) this.textEl.querySelector(".lv-empty-trace")?.remove();
    this.side?.markEmpty();
    this.jumps = null;
    this.jumpBtn.hidden = this.data.n === 0;
    this.header.textContent = headerText(this.data);
    this.windowIfLong();
    this.extend(SLICE);
    if (!this.panel.sized) this.measureLater();
    this.redrawStrip();
  }

  redrawStrip() {
    if (this.data) this.strip.schedule(this.data, this.model.get("palette"), this.dark);
  }

  /** The background turned dark or light (theme_watch.js): recolour with the palette's ends swapped. */
  onTheme(dark) {
    this.dark = dark;
    this.recolor();
    this.redrawStrip();
  }

  /** The presentation size changed: every size scales (theme.css), the panel is measured again. */
  onSize() {
    this.root.classList.toggle("lv-size-projector", this.model.get("size") === "projector");
    if (!this.data) return;
    buildLegend(this.legend, this.sc, this.model, (values) => this.setTraits(values)); // (its size selector)
    this.panel.sized = false;
    this.measureLater();
    this.redrawStrip();
  }

  onResize() {
    this.theme?.check(); // (a tab shown again: no transition ran while it was hidden)
    if (this.data && this.data.n > 0 && !this.panel.sized) this.measureLater(); // laid out now (it was detached)
    this.text?.refresh(); // (a new width: the window's heights are measured again)
    this.panel?.follow(); // the text re-flowed: the hover box follows its token
    this.redrawStrip();
  }

  onForks() {
    this.forks = new Set(this.model.get("forks") ?? []);
    if (!this.text) return;
    this.text.spans.forEach((span, i) => {
      const fork = this.forks.has(i);
      span.classList.toggle("lv-fork", fork);
      if (fork && !span.title) span.title = FORK_TITLE;
      else if (!fork && span.title === FORK_TITLE) span.title = "";
    });
  }

  /** Start: subscribe to the store, the traits and the DOM's events; returns the cleanup. */
  start() {
    const onStore = (what, start) => (what === "grow" ? this.grow(start) : this.build());
    this.store.views.add(onStore);
    const stopListening = listen(this, JUMPS);
    const stopKeys = listenAppKeys(this);
    const stopSide = this.side ? this.side.listen() : () => {};
    this.dark = onDark(this.root);
    this.theme = watchTheme(this.root, this.dark, (dark) => this.onTheme(dark));
    const n = this.model.get("_payload")?.n;
    let initial = 0;
    if (Number.isInteger(n) && n <= BUILD_AT_ONCE_MAX) this.build();
    else initial = setTimeout(() => this.build(), 0);
    return () => {
      clearTimeout(initial);
      this.cancelBuild();
      this.cancelPaint();
      this.strip?.cancel();
      this.store.views.delete(onStore);
      stopListening();
      stopKeys();
      stopSide();
      this.theme.stop();
      this.why.stop(), this.stick?.stop();
      if (this.visibility) this.visibility.disconnect();
      this.text?.stop();
      this.root.remove();
    };
  }
}

function render({ model, el }) {
  // A user-timing mark where the view's clock starts: a profile, or benchmarks/frontend_lab.py in a
  // real JupyterLab, times from here to the first painted frame that holds a token.
  performance.mark?.("logprob_viz:render");
  return new LogprobRender(model, el).start();
}

export default { initialize, render };
