// The layers x tokens heatmap. Only the columns in view (and a margin) exist in the DOM, so a
// 2,000-token text costs what its visible part costs; scrolling adds and removes columns.
// Row 0 on screen is the last layer (the model's output), the bottom row is the first block,
// and under it each token's text: the prediction forms from the bottom up.

import { h as el } from "../toolkit/dom.js";
import { visible } from "../toolkit/whitespace.js";
import { cellStyle, tokenAt } from "./data.js";

const COL_WIDTH = 64; // px; a cell shows the start of the layer's top guess
const ROW_HEIGHT = 18; // px
const MARGIN = 6; // columns rendered beyond each edge of the view

/** Token i's column: a cell per layer (the last layer on top), then the token. */
function makeColumn(d, i, pinned) {
  const col = el("div", "lvl-col");
  col.dataset.index = String(i);
  col.style.left = `${i * COL_WIDTH}px`;
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

/**
 * Build the grid for decoded lens data `d`.
 * on.hover(r, i) / on.leave() / on.pin(i): r is the row (index into d.layers), i the token.
 * Returns {element, setPinned(i), setHovered(r, i), refresh(), destroy()}.
 */
export function createGrid(d, on) {
  const root = el("div", "lvl-grid");
  const axis = el("div", "lvl-axis");
  const scroll = el("div", "lvl-scroll");
  const content = el("div", "lvl-content");
  scroll.append(content);
  root.append(axis, scroll);
  content.style.width = `${d.n * COL_WIDTH}px`;
  content.style.height = `${(d.L + 1) * ROW_HEIGHT + 4}px`;
  root.style.setProperty("--lvl-row", `${ROW_HEIGHT}px`);
  root.style.setProperty("--lvl-col", `${COL_WIDTH}px`);

  fillAxis(axis, d);

  const columns = new Map(); // token index -> column element
  let pinned = -1;
  let hovered = null;

  function render() {
    const width = scroll.clientWidth || 1200; // before layout: a screenful
    const first = Math.max(0, Math.floor(scroll.scrollLeft / COL_WIDTH) - MARGIN);
    const last = Math.min(d.n - 1, Math.ceil((scroll.scrollLeft + width) / COL_WIDTH) + MARGIN);
    for (const [i, col] of columns) {
      if (i < first || i > last) {
        col.remove();
        columns.delete(i);
      }
    }
    for (let i = first; i <= last; i++) {
      if (!columns.has(i)) {
        const col = makeColumn(d, i, pinned);
        columns.set(i, col);
        content.append(col);
      }
    }
    markHovered();
  }

  let frame = 0;
  const onScroll = () => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), render()));
  };
  scroll.addEventListener("scroll", onScroll, { passive: true });
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(onScroll) : null;
  resize?.observe(scroll);

  delegate(content, on);

  function markHovered() {
    content.querySelector(".lvl-cell.lvl-hovered")?.classList.remove("lvl-hovered");
    if (!hovered) return;
    const col = columns.get(hovered[1]);
    col?.querySelector(`.lvl-cell[data-row='${hovered[0]}']`)?.classList.add("lvl-hovered");
  }

  render();
  return {
    element: root,
    setPinned(i) {
      columns.get(pinned)?.classList.remove("lvl-pinned");
      pinned = i;
      columns.get(pinned)?.classList.add("lvl-pinned");
      if (i >= 0) {
        const left = i * COL_WIDTH;
        if (left < scroll.scrollLeft || left + COL_WIDTH > scroll.scrollLeft + scroll.clientWidth) {
          scroll.scrollLeft = Math.max(0, left - scroll.clientWidth / 2);
        }
      }
    },
    setHovered(r, i) {
      hovered = r == null ? null : [r, i];
      markHovered();
    },
    refresh: render,
    destroy() {
      scroll.removeEventListener("scroll", onScroll);
      resize?.disconnect();
      if (frame) cancelAnimationFrame(frame);
    },
  };
}
