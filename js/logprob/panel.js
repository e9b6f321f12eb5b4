// The LogprobView's chart panel: the alternatives chart of the token on show (hovered or
// pinned), or the trace's overview while none is (overview.js); the hover box that outlines that
// token in the text, and the panel's fixed height (measured once, so hovering never changes the
// widget's size).

import { h } from "../toolkit/dom.js";
import { appendText } from "./text.js";
import { buildChart, Chart, ROW_PX, secondColumn, tallest } from "./chart.js";
import { buildOverview } from "./overview.js";

export class ChartPanel {
  /**
   * `textEl`: the text box (the hover box goes in it); `estimate`: the height (px) until measured;
   * `ask`: { showIds(), style(i), pinned(), spanOf(i), strip } from the view.
   */
  constructor(textEl, estimate, ask) {
    this.textEl = textEl;
    this.ask = ask;
    this.shown = -1; // index whose chart is on screen
    this.activeEl = null;
    this.sized = false; // whether the height was measured (see `size`)
    this.hoverBox = h("div", "lv-hover-box");
    this.hoverBox.style.display = "none";
    // In a layer of its own that contains its layout: resizing the box relays out the layer only,
    // not the text (which, a flex item, would pass the layout up to the page's root).
    const layer = h("div", "lv-hover-layer");
    layer.appendChild(this.hoverBox);
    textEl.appendChild(layer);
    this.el = h("div", "lv-panel");
    this.el.style.height = `${estimate}px`; // hovering never changes the widget's size: see `size`
    this.overview = null; // the overview of the trace as it is now (built when first shown, see `invalidate`)
    this.chart = new Chart(); // one chart, updated in place for each token shown
  }

  /**
   * The trace changed (it grew, or was recoloured): the overview is built again when next shown.
   * (Not on every hover: leaving the text shows the overview again, the same element.)
   */
  invalidate() {
    this.overview = null;
  }

  /** Show token i's chart (-1: the trace's overview); again only when `force`. */
  show(data, i, force = false) {
    if (i === this.shown && !force) return;
    this.shown = i;
    const { ask } = this;
    this.markActive(i); // first: it reads the text's layout, still clean before the chart changes
    const pinned = i === ask.pinned();
    const opts = { promptLen: data.promptLen, showIds: ask.showIds(), style: ask.style(i), pinned, flags: data.flagNotes[String(i)] };
    if (ask.explorer) Object.assign(opts, ask.explorer(i)); // branching, explored, forced (explorer.js)
    // Hovered tokens share one chart updated in place; the pinned token's chart is a chart of its
    // own, which "why?" (why.js) decorates without leaving its buttons in the shared one.
    const decorated = i >= 0 && pinned && ask.decorate;
    if (i < 0 && !this.overview) this.overview = buildOverview(data, ask.style);
    const shownEl = i < 0 ? this.overview : decorated ? buildChart(data, i, opts) : this.chart.show(data, i, opts).el;
    if (decorated) ask.decorate(shownEl, i);
    if (this.el.firstChild !== shownEl || this.el.childNodes.length !== 1) this.el.replaceChildren(shownEl);
    ask.strip.mark(i, data.n);
  }

  /**
   * Outline token i with the hover box: a layer of its own over the text, moved by a transform, so
   * the text (10,000s of spans) is not repainted on hover. The span keeps the `lv-active` class.
   */
  markActive(i) {
    const span = this.ask.spanOf(i);
    let rect = null; // every layout read first, while the layout is still clean; then the writes
    if (span && span.isConnected) {
      const { textEl } = this;
      const box = textEl.getBoundingClientRect();
      const r = span.getBoundingClientRect();
      const x = r.left - box.left + textEl.scrollLeft - textEl.clientLeft;
      const y = r.top - box.top + textEl.scrollTop - textEl.clientTop;
      rect = { width: `${r.width}px`, height: `${r.height}px`, transform: `translate(${x}px, ${y}px)` };
    }
    if (this.activeEl && this.activeEl !== span) this.activeEl.classList.remove("lv-active");
    this.activeEl = span;
    if (!rect) {
      this.hoverBox.style.display = "none"; // (none, or out of the DOM with its block: block_window.js)
      if (span) span.classList.add("lv-active");
      return;
    }
    Object.assign(this.hoverBox.style, { display: "", ...rect });
    span.classList.add("lv-active");
  }

  /** The text re-flowed: the hover box follows its token. */
  follow() {
    if (this.activeEl) this.markActive(this.shown);
  }

  /**
   * Give the panel the height of the tallest chart this trace can show (K alternatives, a gap and
   * the chosen token outside the top K, pinned), measured once from a hidden chart. Not measured
   * while the view is not laid out (then `sized` stays false and the view measures on resize).
   */
  size(data) {
    if (this.sized) return;
    // (in the explorer, with the widest column under the sliders it can show, and its note; in a plain
    // view, with the sampled-from column and its note if any token has one: the tallest chart by rows
    // may be a token that was not sampled, whose chart has neither)
    const column = this.ask.measureColumn ? this.ask.measureColumn() : anySampledColumn(data);
    const chart = buildChart(data, tallest(data), { promptLen: data.promptLen, showIds: this.ask.showIds(), style: null, pinned: true, column });
    if (this.ask.decorate) this.ask.decorate(chart, tallest(data), true); // room for "why?" too
    widest(chart, data, column);
    chart.style.visibility = "hidden";
    const shownNow = [...this.el.childNodes];
    this.el.replaceChildren(chart);
    const height = chart.getBoundingClientRect().height;
    const rows = chart.querySelectorAll(".lv-alt-row");
    const row = rows.length ? rows[0].getBoundingClientRect().height : ROW_PX;
    const css = getComputedStyle(this.el);
    const frame = ["paddingTop", "paddingBottom", "borderTopWidth", "borderBottomWidth"].reduce((sum, k) => sum + (parseFloat(css[k]) || 0), 0);
    this.el.replaceChildren(...shownNow);
    if (!height) return;
    // Rows the measured chart lacks: up to K alternatives, the gap, the chosen token outside the top K and its rank line.
    const missing = data.k === 0 ? 0 : Math.max(0, data.k + 3 - rows.length - 2 * chart.querySelectorAll(".lv-alt-gap").length);
    this.el.style.height = `${Math.ceil(height + missing * row + frame)}px`;
    this.el.classList.add("lv-sized"); // (tests wait for it)
    this.sized = true;
  }
}

/** The sampled-from column of the first sampled token (undefined where no token was sampled). */
function anySampledColumn(data) {
  for (let i = data.promptLen; i < Math.min(data.n, 5000); i++) {
    const column = secondColumn(data, i, { promptLen: data.promptLen });
    if (column) return column;
  }
  return undefined;
}

/**
 * Give the measured chart the widest texts any of this trace's charts can hold, so that its lines
 * wrap as the widest one's do: a long token in the title (its "token i of n" then wraps to a line
 * of its own) and the largest rank in the statistics. Measured with the tallest chart's texts only,
 * the chart of a token far outside the top K (whose "rank 2345" wraps the statistics onto a
 * second line) lost its footer below the panel's edge.
 */
function widest(chart, data, column) {
  let rank = 0;
  for (let i = 0; i < data.n; i++) rank = Math.max(rank, data.ranks[i]);
  const chip = chart.querySelector(".lv-chart-title .lv-chip");
  if (chip) {
    // the trace's longest token, as the chip shows it (whitespace marks and all): a chip wraps,
    // so a made-up 80-character name measured several lines the real charts never need
    let longest = "";
    for (let i = 0; i < data.n; i++) if (data.tokens[i].length > longest.length) longest = data.tokens[i];
    chip.replaceChildren();
    appendText(chip, longest);
  }
  const where = chart.querySelector(".lv-chart-where");
  if (where) where.textContent = `token ${data.n} of ${data.n} \u00b7 completion \u00b7 id 999999`;
  const stats = chart.querySelector(".lv-chart-stats");
  if (!stats) return;
  const texts = ["p 100.0%", "logprob -99.999", `rank ${Math.max(rank, 1)}`, "entropy 9.99 nats"];
  if (column) texts.push(`${column.stat} 99.9%\u2013100.0%`);
  else if (data.processedLogprobs) texts.push("sampled p 100.0%");
  stats.replaceChildren(...texts.map((t) => h("span", "lv-stat", t)));
}
