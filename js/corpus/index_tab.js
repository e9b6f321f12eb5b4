// The surprise index tab: a sortable table of token groups (by token text or by token class),
// and, for the clicked group, its occurrences keyword-in-context: left context, the token
// coloured by its probability, right context. Clicking an occurrence selects its trace and pins
// the token. The occurrences come from the kernel (the `_occurrences` trait answers
// `index_group`); without one, the tab says so. The index itself comes from the kernel when the
// tab is first opened (the `_index` trait; a large corpus's view opens without computing it), or
// with a payload saved before that. All text goes in with textContent.

import { ask, KERNEL_WAIT_MS } from "../toolkit/ask.js";
import { paletteColor, styleOn } from "../toolkit/colors.js";
import { h, select } from "../toolkit/dom.js";
import { formatFixed, formatLogprob, formatPercent, percentOfLogprob } from "../toolkit/format.js";
import { fontFamilyOf, textMeasure } from "../toolkit/measure.js";
import { visible } from "../toolkit/whitespace.js";
import { INDEX_COLUMNS, decodeIndex, indexRows } from "./data.js";
import { VirtualTable } from "./table.js";

const INDEX_WAIT_MS = 6 * KERNEL_WAIT_MS; // the index of 1M traces takes the kernel seconds

/** The text of an index cell. */
function indexCell(index, by, row, name) {
  const v = index.columns[name][row];
  if (name === "group") return by === "token" ? visible(v) : v;
  if (name === "count") return String(v);
  if (name === "share_rank_over_10") return formatPercent(v);
  if (name === "mean_rank") return formatFixed(v, 1);
  return formatFixed(v, 3);
}

export class IndexTab {
  constructor(model, data, onPick) {
    this.model = model;
    this.data = data;
    this.onPick = onPick;
    this.sort = { column: "", descending: true };
    this.el = h("div", "lvx-index");
    const bar = h("div", "lvx-toolbar");
    bar.appendChild(h("span", "lvx-ctl-label", "group by"));
    this.bySelect = select([["token", "token"], ["class", "token class"]], model.get("index_by"), "lvx-by", (by) => {
      model.set("index_by", by);
      model.set("index_group", "");
      model.save_changes();
    });
    this.count = h("span", "lvx-count");
    bar.append(this.bySelect, this.count);
    this.table = new VirtualTable({
      columns: INDEX_COLUMNS,
      className: "lvx-index-grid",
      cellText: (row, name) => indexCell(this.index(), this.by(), row, name),
      onRowClick: (row) => this.pickGroup(row),
      onHeaderClick: (name) => this.sortBy(name),
      maxRows: 9,
    });
    this.occTitle = h("div", "lvx-occ-title");
    this.occ = h("div", "lvx-occurrences");
    this.el.append(bar, this.table.el, this.occTitle, this.occ);
    this.onOccurrences = () => this.showOccurrences();
    this.onBy = () => this.refresh();
    this.onIndex = () => this.readIndex();
    model.on("change:_occurrences", this.onOccurrences);
    model.on("change:index_by", this.onBy);
    model.on("change:_index", this.onIndex);
    data.index ??= decodeIndex(model.get("_index"));
    this.refresh();
    this.showOccurrences();
    this.frame = requestAnimationFrame(() => (this.keepRoom(), this.fitGroups())); // (attached by then: its styles apply)
  }

  /**
   * The group column as wide as its longest name (in the column's own font), so that no token in the
   * list is cut; a narrow screen scrolls the table sideways instead (corpus.css).
   */
  fitGroups() {
    if (!this.table.el.isConnected) return;
    const cell = this.table.el.querySelector(".lvx-body .lvx-col-group");
    const measure = textMeasure(fontFamilyOf(cell?.parentElement ?? this.table.el, "lvx-cell lvx-col-group"));
    if (!measure) return;
    const px = parseFloat(getComputedStyle(cell ?? this.table.el).fontSize) || 13;
    const index = this.index();
    if (!index) return;
    let widest = 0;
    for (let row = 0; row < index.columns.group.length; row++) {
      widest = Math.max(widest, measure(indexCell(index, this.by(), row, "group"), px));
    }
    this.table.el.style.setProperty("--lvx-group-width", `${Math.ceil(widest) + 2}px`);
  }

  /**
   * The occurrences' room from the start, as tall as their list may grow (its max-height), and the
   * title's two lines: a click on a group fills the room and moves nothing below it on the page.
   */
  keepRoom() {
    if (!this.occ.isConnected || this.occ.style.minHeight) return;
    const list = getComputedStyle(this.occ);
    if (list.maxHeight && list.maxHeight !== "none") this.occ.style.minHeight = list.maxHeight;
    this.occTitle.style.minHeight = "2.8em"; // (two lines of its text)
  }

  by() {
    return this.model.get("index_by") === "class" ? "class" : "token";
  }

  index() {
    return this.data.index ? this.data.index[this.by()] : null;
  }

  readIndex() {
    this.data.index = decodeIndex(this.model.get("_index")) ?? this.data.index;
    this.indexWait?.();
    this.refresh();
  }

  /** Shown while the kernel computes the index (it starts when the tab opens: the `tab` trait). */
  waitForIndex() {
    this.count.textContent = "computing the surprise index\u2026";
    // (the `tab` trait asked for it already: nothing more to send)
    this.indexWait ??= ask(this.model, {}, {
      timeout: INDEX_WAIT_MS,
      noAnswer: () => {
        if (!this.data.index) {
          this.count.textContent = "The surprise index needs the kernel: this is a saved view of a large corpus. "
            + "Run the cell again (or corpus.surprise_index() in Python).";
        }
      },
    });
  }

  refresh() {
    this.bySelect.value = this.by();
    const index = this.index();
    if (!index) {
      this.table.setRows(new Int32Array(0), 0);
      if (this.model.get("tab") === "index") this.waitForIndex();
      return;
    }
    const rows = indexRows(index, this.sort);
    this.count.textContent = `${rows.length.toLocaleString("en-US")} groups`;
    this.table.setSort(this.sort.column, this.sort.descending);
    this.table.setRows(rows, rows.length);
    this.fitGroups();
  }

  sortBy(name) {
    const descending = this.sort.column === name ? !this.sort.descending : name !== "group";
    this.sort = { column: name, descending };
    this.refresh();
  }

  pickGroup(row) {
    this.keepRoom();
    const group = this.index().columns.group[row];
    this.table.setSelected(row);
    this.wait?.();
    this.wait = ask(this.model, { traits: { index_group: group } }, {
      noAnswer: () => {
        const got = this.model.get("_occurrences") || {};
        if (got.group !== group || got.by !== this.by()) {
          this.occTitle.textContent = "Listing a group's occurrences needs the kernel: this is a saved view. "
            + "Run the cell again (or corpus.occurrences(group) in Python).";
        }
      },
    });
    this.occTitle.textContent = `occurrences of ${this.by() === "token" ? visible(group) : group}: asking the kernel\u2026`;
    this.occ.replaceChildren();
  }

  showOccurrences() {
    const got = this.model.get("_occurrences") || {};
    this.occ.replaceChildren();
    if (!got.group) {
      this.occTitle.textContent = "Click a group to list its occurrences in context.";
      return;
    }
    this.wait?.();
    const shown = got.by === "token" ? visible(got.group) : got.group;
    if (got.error) {
      this.occTitle.textContent = got.error;
      return;
    }
    this.occTitle.textContent = `${got.rows.length} occurrences of ${shown}, most surprising first (click one to open it)`;
    for (const r of got.rows) this.occ.appendChild(this.occurrenceLine(r));
  }

  occurrenceLine(r) {
    const line = h("div", "lvx-occ");
    line.dataset.item = String(r.item);
    line.dataset.position = String(r.position);
    line.appendChild(h("span", "lvx-occ-label", r.label));
    line.appendChild(h("span", "lvx-occ-left", r.left.replace(/[\n\r\t]/g, " ")));
    const lp = r.logprob == null ? NaN : r.logprob;
    const tok = h("span", "lvx-occ-token", visible(r.token));
    const style = styleOn(Number.isNaN(lp) ? null : paletteColor("viridis", Math.exp(lp)));
    if (style) Object.assign(tok.style, style);
    tok.title = `p = ${percentOfLogprob(lp)}, logprob ${formatLogprob(lp)}, rank ${r.rank || "?"}`;
    line.appendChild(tok);
    line.appendChild(h("span", "lvx-occ-right", r.right.replace(/[\n\r\t]/g, " ")));
    line.appendChild(h("span", "lvx-occ-lp", formatLogprob(lp)));
    line.addEventListener("click", () => this.onPick(r.item, r.position));
    return line;
  }

  dispose() {
    cancelAnimationFrame(this.frame);
    this.wait?.();
    this.indexWait?.();
    this.model.off("change:_occurrences", this.onOccurrences);
    this.model.off("change:index_by", this.onBy);
    this.model.off("change:_index", this.onIndex);
  }
}
