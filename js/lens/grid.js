// The layers x tokens heatmap. Only the columns in view (and a margin) exist in the DOM, so a
// 2,000-token text costs what its visible part costs; scrolling adds and removes columns.
// Row 0 on screen is the last layer (the model's output), the bottom row is the first block,
// and under it each token's text: the prediction forms from the bottom up. Each column is as
// wide as its longest text (columns.js), so every name shows whole.

import { h as el } from "../toolkit/dom.js";
import { fontFamilyOf, textMeasure } from "../toolkit/measure.js";
import { visible } from "../toolkit/whitespace.js";
import { columnAt, columnLefts, estimateWidth } from "./columns.js";
import { cellStyle, tokenAt } from "./data.js";

const ROW_HEIGHT = 18; // px
const MARGIN = 6; // columns rendered beyond each edge of the view
const FONT_PX = { cell: 10, token: 11 }; // lens.css: .lvl-cell and .lvl-token

/** Token i's column, from lefts[i] to lefts[i + 1]: a cell per layer (the last layer on top), then the token. */
function makeColumn(d, i, pinned, lefts) {
  const col = el("div", "lvl-col");
  col.dataset.index = String(i);
  col.style.left = `${lefts[i]}px`;
  col.style.width = `${lefts[i + 1] - lefts[i]}px`;
  for (let r = d.L - 1; r >= 0; r--) {
    const at = r * d.n + i;
    const p = Math.exp(d.logprobs[at]);
    const cell = el("div", "lvl-cell", i === 0 ? "" : visible(d.texts[d.top1Text[at]]));
    cell.dataset.row = String(r);
    cell.dataset.layer = String(d.layers[r]);
    cell.dataset.index = String(i);
    const style = cellStyle(p);
    if (style) {
      cell.style.background = style.background;
      cell.style.color = style.color;
    } else {
      cell.classList.add("lvl-unknown");
    }
    if (d.ranks[at] === 1) cell.classList.add("lvl-top1"); // the layer's guess is the actual token
    col.append(cell);
  }
  const token = el("div", "lvl-token", visible(tokenAt(d, i)));
  token.dataset.index = String(i);
  col.append(token);
  if (i === pinned) col.classList.add("lvl-pinned");
  return col;
}

/** The layer labels down the left (the last layer on top), then the token row's. */
function fillAxis(axis, d) {
  for (let r = d.L - 1; r >= 0; r--) {
    const label = el("div", "lvl-layer-label", `${d.layers[r]}`);
    label.dataset.row = String(r);
    label.title = r === d.L - 1 && d.layers[r] === d.nBlocks - 1 ? "the last block: the model's output" : `after block ${d.layers[r]}`;
    axis.append(label);
  }
  axis.append(el("div", "lvl-axis-token", "token"));
}

/** Scroll the grid sideways so that the column from `left` to `right` px is in view (centred when it was not). */
function bringIntoView(scroll, left, right) {
  if (left < scroll.scrollLeft || right > scroll.scrollLeft + scroll.clientWidth) {
    scroll.scrollLeft = Math.max(0, left - scroll.clientWidth / 2);
  }
}

/** Hover, leave and click on the grid's content, delegated: one listener each. */
function delegate(content, on) {
  content.addEventListener("mouseover", (event) => {
    const cell = event.target.closest?.(".lvl-cell");
    if (cell) on.hover(Number(cell.dataset.row), Number(cell.dataset.index));
  });
  content.addEventListener("mouseleave", () => on.leave());
  content.addEventListener("click", (event) => {
    const hit = event.target.closest?.(".lvl-cell, .lvl-token");
    if (hit) on.pin(Number(hit.dataset.index));
  });
}

/** The grid's boxes: the layer axis beside a sideways scroller whose content holds the columns. */
function gridFrame(d) {
  const root = el("div", "lvl-grid");
  const axis = el("div", "lvl-axis");
  const scroll = el("div", "lvl-scroll");
  const content = el("div", "lvl-content");
  scroll.append(content);
  root.append(axis, scroll);
  content.style.height = `${(d.L + 1) * ROW_HEIGHT + 4}px`;
  root.style.setProperty("--lvl-row", `${ROW_HEIGHT}px`);
  fillAxis(axis, d);
  return { root, scroll, content };
}

/** The columns in view (and a margin) of a grid, kept in step with its scroll, its size and its pin. */
class ColumnWindow {
  constructor(d, scroll, content) {
    Object.assign(this, { d, scroll, content });
    this.columns = new Map(); // token index -> column element
    this.pinned = -1;
    this.hovered = null; // [row, token] or null
    this.lefts = null;
    this.measured = false; // widths from the page's own font, once the grid is on the page
    this.frame = 0;
    this.onScroll = () => {
      if (!this.frame) this.frame = requestAnimationFrame(() => ((this.frame = 0), this.render()));
    };
    scroll.addEventListener("scroll", this.onScroll, { passive: true });
    this.resize = typeof ResizeObserver === "function" ? new ResizeObserver(this.onScroll) : null;
    this.resize?.observe(scroll);
  }

  /** The columns' edges: estimated until the grid is on the page, then measured (once). */
  layOut() {
    const { d, scroll, content } = this;
    if (this.lefts && (this.measured || !scroll.isConnected)) return;
    this.measured = scroll.isConnected;
    const measure = this.measured ? textMeasure(fontFamilyOf(content, "lvl-cell")) : null;
    this.lefts = columnLefts(d, measure ? (text, role) => measure(text, FONT_PX[role]) : estimateWidth);
    content.style.width = `${this.lefts[d.n]}px`;
    for (const col of this.columns.values()) col.remove(); // drawn at the estimate: redraw at the measure
    this.columns.clear();
  }

  /** Add the columns that came into view, remove those that left it. */
  render() {
    this.layOut();
    const { d, scroll, columns, lefts } = this;
    const width = scroll.clientWidth || 1200; // before layout: a screenful
    const first = Math.max(0, columnAt(lefts, scroll.scrollLeft) - MARGIN);
    const last = Math.min(d.n - 1, columnAt(lefts, scroll.scrollLeft + width) + MARGIN);
    for (const [i, col] of columns) {
      if (i < first || i > last) {
        col.remove();
        columns.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (columns.has(i)) continue;
      const col = makeColumn(d, i, this.pinned, lefts);
      columns.set(i, col);
      this.content.append(col);
    }
    this.markHovered();
  }

  markHovered() {
    this.content.querySelector(".lvl-cell.lvl-hovered")?.classList.remove("lvl-hovered");
    if (!this.hovered) return;
    const [row, i] = this.hovered;
    this.columns.get(i)?.querySelector(`.lvl-cell[data-row='${row}']`)?.classList.add("lvl-hovered");
  }

  setPinned(i) {
    this.columns.get(this.pinned)?.classList.remove("lvl-pinned");
    this.pinned = i;
    this.columns.get(i)?.classList.add("lvl-pinned");
    if (i >= 0) bringIntoView(this.scroll, this.lefts[i], this.lefts[i + 1]);
  }

  setHovered(r, i) {
    this.hovered = r == null ? null : [r, i];
    this.markHovered();
  }

  destroy() {
    this.scroll.removeEventListener("scroll", this.onScroll);
    this.resize?.disconnect();
    if (this.frame) cancelAnimationFrame(this.frame);
  }
}

/**
 * Build the grid for decoded lens data `d`.
 * on.hover(r, i) / on.leave() / on.pin(i): r is the row (index into d.layers), i the token.
 * Returns {element, setPinned(i), setHovered(r, i), refresh(), destroy()}.
 */
export function createGrid(d, on) {
  const { root, scroll, content } = gridFrame(d);
  const win = new ColumnWindow(d, scroll, content);
  delegate(content, on);
  win.render();
  return {
    element: root,
    setPinned: (i) => win.setPinned(i),
    setHovered: (r, i) => win.setHovered(r, i),
    refresh: () => win.render(),
    destroy: () => win.destroy(),
  };
}
