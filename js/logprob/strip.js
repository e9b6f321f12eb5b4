// The surprisal strip: one canvas bar per pixel column over the whole trace (the highest
// surprisal of its tokens), and a marker at the token on show. Redrawn at most once a frame,
// so a stream's appends and resizes cost one draw each frame at most.

import { rgb } from "../toolkit/colors.js";
import { h } from "../toolkit/dom.js";
import { scale } from "./modes.js";
import { stripBins, stripIndex, stripX } from "./stats.js";

const HEIGHT = 18; // px at the normal size, until the strip is laid out (its CSS height is --lv-strip-height)

export class Strip {
  constructor() {
    this.el = h("div", "lv-strip");
    this.el.title = "surprisal of every token (the highest in each pixel); hover to find it in the text";
    this.canvas = h("canvas", "lv-strip-canvas");
    this.marker = h("div", "lv-strip-marker");
    this.marker.style.display = "none";
    this.el.append(this.canvas, this.marker);
    this.pending = 0;
    this.missed = false; // a draw was asked for while the strip had no width
    this.retries = 0;
    // Drawn again once it has a width: a live theme switch unstyles the page for a moment, and the
    // view's own size may not change (nothing else would redraw it).
    this.sized = typeof ResizeObserver === "function" ? new ResizeObserver(() => this.missed && this.redraw()) : null;
    this.sized?.observe(this.el);
  }

  redraw() {
    if (this.args) this.schedule(...this.args);
  }

  /** Draw on the next frame (once however often it is asked); `dark`: the background is (modes.js). */
  schedule(data, palette, dark = false) {
    this.args = [data, palette, dark];
    if (!this.pending) this.pending = requestAnimationFrame(() => ((this.pending = 0), this.draw(...this.args)));
  }

  draw(data, palette, dark = false) {
    // Not laid out (a hidden tab, a theme being swapped): drawn at one pixel's width, the strip
    // would be one bin stretched across, a solid bar. Keep what is drawn; the resize to a width draws again.
    // (The width can be 0 for one forced layout only, mid-switch, which no ResizeObserver sees: so
    // the next frames look again too, for about a second.)
    this.missed = this.el.clientWidth === 0;
    if (this.missed) {
      if (this.retries++ < 60) this.pending = requestAnimationFrame(() => ((this.pending = 0), this.draw(...this.args)));
      return;
    }
    this.retries = 0;
    const width = Math.floor(this.el.clientWidth);
    const height = this.el.clientHeight || HEIGHT;
    const dpr = window.devicePixelRatio || 1;
    // Not again what is drawn already: every resize of the view asks, and most leave the strip as it was.
    const drawn = [data, data.n, palette, dark, width, height, dpr];
    if (this.drawn && drawn.every((v, k) => v === this.drawn[k])) return;
    this.drawn = drawn;
    this.canvas.width = width * dpr;
    this.canvas.height = height * dpr;
    const ctx = this.canvas.getContext("2d");
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const bins = stripBins(data.logprobs, Math.min(width, Math.max(1, data.n)));
    const colors = scale("logprob", palette, null, dark);
    const bw = width / bins.length;
    for (let b = 0; b < bins.length; b++) {
      const s = bins[b];
      if (Number.isNaN(s)) continue;
      const hgt = Math.max(2, Math.min(1, s / 10) * height);
      ctx.fillStyle = rgb(colors.rgb(s));
      ctx.fillRect(b * bw, height - hgt, Math.max(1, bw - (bw > 3 ? 1 : 0)), hgt);
    }
  }

  /** Put the marker at token i of n (-1: hide it); no layout read, so hovering stays cheap. */
  mark(i, n) {
    this.marker.style.display = i >= 0 ? "" : "none";
    if (i >= 0) this.marker.style.left = `${stripX(i, 100, n)}%`;
  }

  /** The token under a mouse event on the strip. */
  indexAt(e, n) {
    return stripIndex(e.clientX - this.el.getBoundingClientRect().left, this.el.clientWidth, n);
  }

  /** Stop: no draw pending, none on a resize (the view is rebuilt or closed). */
  cancel() {
    if (this.pending) cancelAnimationFrame(this.pending);
    this.pending = 0;
    this.sized?.disconnect();
  }
}
