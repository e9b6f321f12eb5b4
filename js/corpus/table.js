// A virtualised table: only the rows in (and just around) the viewport exist in the DOM, a pool
// of row elements refilled on scroll, so 10,000 or 100,000 rows cost what 30 do. Rows have one
// fixed height; a spacer gives the scrollbar its full length. Cells get text only (textContent),
// or a cell hook draws into its element (the sparkline's canvas). Used for the traces and for the
// surprise index's groups.

import { h } from "../toolkit/dom.js";

export const ROW_HEIGHT = 24; // px: must match .lvx-row in corpus.css
const OVERSCAN = 6; // rows built beyond each edge of the viewport, so a fast scroll shows no gap

/**
 * @param {object} o
 * @param {Array<[string, string, string]>} o.columns [name, title, kind]
 * @param {string} o.className the grid's class (its CSS sets the column widths)
 * @param {(row: number, name: string) => string} o.cellText the text of a cell
 * @param {(row: number, name: string, cell: HTMLElement) => boolean} [o.drawCell] draws a cell itself (true: done)
 * @param {(row: number) => void} o.onRowClick
 * @param {(name: string) => void} o.onHeaderClick
 * @param {string[]} [o.unsortable] columns whose header does not sort
 * @param {Object<string, string>} [o.describe] a header's tooltip: what its column holds
 * @param {number} [o.maxRows] rows in view at most; a table with fewer rows is only as tall as they are
 * @param {(first: number, last: number) => void} [o.onPaint] told the positions [first, last) each paint shows
 */
export class VirtualTable {
  constructor(o) {
    Object.assign(this, { drawCell: () => false, onPaint: () => {}, unsortable: [], describe: {}, maxRows: 12 }, o);
    this.el = h("div", `lvx-table ${o.className}`);
    this.header = h("div", "lvx-row lvx-head");
    this.header.setAttribute("role", "row");
    this.heads = new Map();
    for (const [name, title, kind] of this.columns) {
      const cell = h("div", `lvx-cell lvx-col-${name} lvx-${kind}`);
      cell.appendChild(h("span", "lvx-head-title", title));
      cell.appendChild(h("span", "lvx-sort-mark"));
      cell.setAttribute("role", "columnheader");
      if (!this.unsortable.includes(name)) {
        cell.classList.add("lvx-sortable");
        cell.title = `${this.describe[name] ?? title}: click to sort`;
        cell.addEventListener("click", () => this.onHeaderClick(name));
      }
      this.heads.set(name, cell);
      this.header.appendChild(cell);
    }
    this.body = h("div", "lvx-body");
    this.body.setAttribute("role", "rowgroup");
    this.spacer = h("div", "lvx-spacer");
    this.body.appendChild(this.spacer);
    this.el.append(this.header, this.body);
    this.rows = new Int32Array(0);
    this.pool = [];
    this.selected = -1;
    this.body.addEventListener("scroll", () => this.paint(), { passive: true });
    this.body.addEventListener("click", (e) => {
      const rowEl = e.target.closest(".lvx-row");
      const row = rowEl && rowEl.dataset.row != null && rowEl.dataset.row !== "" ? Number(rowEl.dataset.row) : -1;
      if (row >= 0) this.onRowClick(row); // (-1: a row of a large corpus whose window has not come yet)
    });
  }

  /** Show `rows` (row numbers, in display order) of `total` (the height fits a small total). */
  setRows(rows, total = rows.length) {
    this.rows = rows;
    this.body.style.height = `${Math.max(1, Math.min(total, this.maxRows)) * ROW_HEIGHT}px`;
    this.spacer.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.paint(true);
  }

  /** Mark the header of `column` as sorted ("ascending" / "descending"), the others not. */
  setSort(column, descending) {
    for (const [name, cell] of this.heads) {
      const on = name === column;
      cell.setAttribute("aria-sort", on ? (descending ? "descending" : "ascending") : "none");
      cell.querySelector(".lvx-sort-mark").textContent = on ? (descending ? " \u25bc" : " \u25b2") : "";
    }
  }

  setSelected(row) {
    this.selected = row;
    for (const el of this.pool) el.classList.toggle("lvx-selected", el.dataset.row === String(row) && row >= 0);
  }

  /** Scroll so that `row` is in view (when it is shown at all). */
  reveal(row) {
    const at = this.rows.indexOf(row);
    if (at < 0) return;
    const top = at * ROW_HEIGHT;
    const view = this.body.clientHeight || ROW_HEIGHT * 10;
    if (top < this.body.scrollTop || top + ROW_HEIGHT > this.body.scrollTop + view) {
      this.body.scrollTop = Math.max(0, top - view / 2);
    }
    this.paint();
  }

  /** Fill the pool's row elements with the rows now in view (all of them when `force`). */
  paint(force = false) {
    const view = this.body.clientHeight || ROW_HEIGHT * 15;
    const first = Math.max(0, Math.floor(this.body.scrollTop / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((this.body.scrollTop + view) / ROW_HEIGHT) + OVERSCAN);
    const needed = last - first;
    this.onPaint(first, last);
    while (this.pool.length < needed) this.pool.push(this.makeRow());
    for (let p = 0; p < this.pool.length; p++) {
      const el = this.pool[p];
      const at = first + p;
      if (at >= last) {
        el.style.display = "none";
        el.dataset.row = "";
        continue;
      }
      const row = this.rows[at];
      el.style.display = "";
      el.style.transform = `translateY(${at * ROW_HEIGHT}px)`;
      if (!force && el.dataset.row === String(row)) continue;
      el.dataset.row = String(row);
      el.classList.toggle("lvx-selected", row >= 0 && row === this.selected);
      this.fillRow(el, row);
    }
  }

  makeRow() {
    const el = h("div", "lvx-row lvx-data");
    el.setAttribute("role", "row");
    for (const [name, , kind] of this.columns) el.appendChild(h("div", `lvx-cell lvx-col-${name} lvx-${kind}`));
    this.body.appendChild(el);
    return el;
  }

  fillRow(el, row) {
    const cells = el.children;
    for (let c = 0; c < this.columns.length; c++) {
      const name = this.columns[c][0];
      if (this.drawCell(row, name, cells[c])) continue;
      const text = this.cellText(row, name);
      cells[c].textContent = text;
      if (this.columns[c][2].endsWith("text")) cells[c].title = text.length > 40 ? text.slice(0, 600) : "";
    }
  }
}
