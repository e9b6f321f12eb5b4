// A long text's blocks, only those near the text box's view in the DOM. Off-screen blocks laid
// out lazily (content-visibility) still leave one box each that every hover frame's layout, pre-
// paint and compositing walk: about 700 at 100,000 tokens, which kept a hover over a frame. Here
// the blocks above and below the window are not in the document at all; two spacers stand in for
// them, each as tall as the blocks it replaces (their measured heights, or for a block never laid
// out an estimate from the tokens per pixel measured so far), so the scrollbar keeps its size.
// The spans of a detached block live on (TokenText.spans), marked and coloured as ever, and are
// put back when their block comes near the view (`reveal` scrolls there first).
// A casualty: the browser's find sees only the blocks in the DOM (texts up to WINDOW_FROM tokens
// are all in it).

import { h } from "../toolkit/dom.js";

export const WINDOW_FROM = 20000; // tokens: from this length on, only a window of blocks is in the DOM
const MARGIN = 1; // view heights above and below the view kept in the DOM (a fast scroll shows them laid out)
const PX_PER_TOKEN = 1.5; // estimate until a block is measured (a line of ~13 tokens at 19 px)
const HULL_BLOCKS = 60; // a selection keeps the blocks it spans in the DOM, up to this many
// The estimate is calibrated on the first blocks measured (about a screen), then kept: were it
// refined by every block measured later, the estimated heights of all the blocks above the view
// would change at once, and the text under the view jump by thousands of pixels.
const CALIBRATE_TOKENS = 2000;

/** The blocks [lo, hi) in the DOM between two spacers; the rest stand in the spacers' heights. */
export class BlockWindow {
  /** `scroller`: the text box (it scrolls); `blocks`: TokenText's, { el, start, end, height } each. */
  constructor(scroller, blocks) {
    this.scroller = scroller;
    this.blocks = blocks;
    this.lo = 0;
    this.hi = 0;
    this.above = h("div", "lv-spacer");
    this.below = h("div", "lv-spacer");
    this.measured = { tokens: 0, px: 0 }; // over the blocks measured, for the estimate
    for (const b of blocks) b.el.remove();
    scroller.append(this.above, this.below);
    this.onScroll = () => this.update();
    scroller.addEventListener("scroll", this.onScroll, { passive: true });
  }

  perToken() {
    return this.measured.tokens ? this.measured.px / this.measured.tokens : PX_PER_TOKEN;
  }

  /** A block's measured height (and, until calibrated, the estimate's tokens per pixel from it). */
  setHeight(b, px) {
    const m = this.measured;
    if (b.height == null && m.tokens < CALIBRATE_TOKENS) Object.assign(m, { tokens: m.tokens + b.end - b.start, px: m.px + px });
    b.height = px;
  }

  heightOf(b) {
    return b.height ?? (b.end - b.start) * this.perToken();
  }

  /** The top of every block and the end of the last, in the scroller's content (px). */
  positions() {
    const tops = new Float64Array(this.blocks.length + 1);
    for (let k = 0; k < this.blocks.length; k++) tops[k + 1] = tops[k] + this.heightOf(this.blocks[k]);
    return tops;
  }

  /** The blocks that meet [from, to) (px), as [lo, hi). */
  static within(tops, from, to) {
    const n = tops.length - 1;
    let lo = 0;
    while (lo < n - 1 && tops[lo + 1] <= from) lo++; // (past the end: the last block)
    let hi = lo;
    while (hi < n && tops[hi] < to) hi++;
    return [lo, Math.max(hi, Math.min(n, lo + 1))];
  }

  /** Heights of the blocks in the DOM, read at once (one layout). */
  measure() {
    const heights = [];
    for (let k = this.lo; k < this.hi; k++) heights.push(this.blocks[k].el.offsetHeight);
    heights.forEach((px, j) => this.setHeight(this.blocks[this.lo + j], px));
  }

  /**
   * The window around the view now (or around `at` px): attach and detach, keep what is in view where
   * it was. `measure` false: by the heights known or estimated, with no layout forced (the first
   * screen, whose layout is the first frame's; the next update measures it).
   */
  update(at = null, measure = true) {
    const { scroller } = this;
    if (!scroller.isConnected) return;
    if (measure) this.measure();
    const before = this.positions();
    const top = at ?? scroller.scrollTop;
    const view = scroller.clientHeight || 500;
    let [lo, hi] = BlockWindow.within(before, top - MARGIN * view, top + (1 + MARGIN) * view);
    [lo, hi] = this.keepSelection(lo, hi);
    const anchor = BlockWindow.within(before, top, top + 1)[0]; // the block at the view's top stays put
    const offset = top - before[anchor];
    if (lo !== this.lo || hi !== this.hi) this.attach(lo, hi);
    if (measure) this.measure();
    const after = this.positions();
    this.above.style.height = `${after[lo]}px`;
    this.below.style.height = `${after[after.length - 1] - after[hi]}px`;
    const want = after[anchor] + offset;
    if (at == null && Math.abs(want - scroller.scrollTop) > 0.5) scroller.scrollTop = want; // (its scroll event: no change)
    return after;
  }

  /** A selection in the text keeps its blocks in the DOM (it would be lost with them), if not too many. */
  keepSelection(lo, hi) {
    const sel = typeof getSelection === "function" ? getSelection() : null;
    if (!sel || sel.isCollapsed || !this.scroller.contains(sel.anchorNode)) return [lo, hi];
    const a = Math.min(lo, this.lo);
    const b = Math.max(hi, this.hi);
    return b - a <= HULL_BLOCKS ? [a, b] : [lo, hi];
  }

  attach(lo, hi) {
    for (let k = this.lo; k < this.hi; k++) if (k < lo || k >= hi) this.blocks[k].el.remove();
    let ref = this.below;
    for (let k = hi - 1; k >= lo; k--) {
      const { el } = this.blocks[k];
      if (k < this.lo || k >= this.hi) this.scroller.insertBefore(el, ref);
      ref = el;
    }
    this.lo = lo;
    this.hi = hi;
  }

  /** Blocks from index `k` on went (a stream resent its end): the window ends before them. */
  dropFrom(k) {
    for (let j = Math.max(k, this.lo); j < this.hi; j++) this.blocks[j]?.el.remove();
    this.hi = Math.min(this.hi, k);
    this.lo = Math.min(this.lo, this.hi);
  }

  /** The text re-flowed (a new width): every height is measured or estimated again. */
  invalidate() {
    for (const b of this.blocks) b.height = null;
    this.measured = { tokens: 0, px: 0 };
  }

  /** Scroll so that block k is in the DOM and near the view's middle. */
  reveal(k) {
    const tops = this.positions();
    const target = Math.max(0, tops[k] - this.scroller.clientHeight / 2);
    this.update(target);
    this.scroller.scrollTop = target;
    this.update();
  }

  /** The index of the block holding token i. */
  blockOf(i) {
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.blocks[mid].start <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  stop() {
    this.scroller.removeEventListener("scroll", this.onScroll);
  }
}
