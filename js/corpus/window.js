// A large corpus's rows, a window at a time (views/corpus/window.py): the kernel sorts and filters,
// and sends the rows at the positions the table shows (`_rows`, asked for through `_view_rows`).
// The table's row list has one entry per shown position: the item where the window holds it, -1
// (an empty row) elsewhere, so selection, arrows and "reveal" work on items as for a whole payload.

import { ask } from "../toolkit/ask.js";
import { readArray } from "../toolkit/codec.js";
import { decodeCorpus } from "./data.js";

export const WINDOW_ROWS = 120; // must match window.py's WINDOW_ROWS
const MARGIN = 40; // rows asked for above the first one in sight, so scrolling up finds rows too

export class RowWindow {
  /** `noAnswer()`: rows were asked for and no kernel sent them (a saved notebook): the view says so. */
  constructor(model, noAnswer = () => {}) {
    this.model = model;
    this.noAnswer = noAnswer;
    this.rows = new Int32Array(0);
    this.read();
  }

  /** Read `_rows`: {start, total, data (the window's rows as decodeCorpus gives them), at (item -> row in data)}. */
  read() {
    const got = this.model.get("_rows") || {};
    this.start = got.start || 0;
    this.total = got.total || 0;
    this.data = got.rows ? decodeCorpus(got.rows) : null;
    this.at = new Map();
    if (this.rows.length !== this.total) this.rows = new Int32Array(this.total);
    this.rows.fill(-1);
    if (this.data) {
      const items = readArray(got.rows.items, "_rows.items");
      this.data.columns.item = items;
      for (let k = 0; k < items.length; k++) {
        this.at.set(items[k], k);
        this.rows[this.start + k] = items[k];
      }
    }
    this.asked = null;
    this.answered?.();
    return this.rows;
  }

  /** The table shows positions [first, last): ask the kernel for them unless this window holds them. */
  want(first, last) {
    const end = this.start + this.at.size;
    if ((first >= this.start && last <= end) || !this.total) return;
    const start = Math.max(0, Math.min(first - MARGIN, this.total - WINDOW_ROWS));
    if (this.asked === start) return;
    this.asked = start;
    this.answered?.();
    this.answered = ask(this.model, { traits: { _view_rows: { start, count: WINDOW_ROWS } } }, { noAnswer: this.noAnswer });
  }
}
