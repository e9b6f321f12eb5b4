// The corpus view's table widget: many traces as a virtualised, sortable, filterable table with
// a surprisal sparkline per row, and the surprise index as a second tab. Selecting a row sets
// `selected_item` (and `pinned`); the kernel shows that trace in the one LogprobView below and
// confirms through `_shown_item`: without a kernel (a saved notebook, the offline page) the
// view says that a row's detail needs one. Sort, filters and tab are traits, so a saved view
// reopens as it was left. Token text and labels go in with textContent only.

import "./corpus.css";
import { ask } from "../toolkit/ask.js";
import { h } from "../toolkit/dom.js";
import { formatFixed, formatStat } from "../toolkit/format.js";
import { ANSWER_COLUMNS, answerFilters, answerText } from "./answers.js";
import { COLUMNS, decodeCorpus, visibleRows } from "./data.js";
import { extraText } from "./extra.js";
import { applyGrid, estimate, measure } from "./grid.js";
import { IndexTab } from "./index_tab.js";
import { drawSpark } from "./spark.js";
import { VirtualTable } from "./table.js";
import { RowWindow } from "./window.js";

const TEXT_CHARS = 160; // of a row's text shown in its cell (the filter reads all of it)
const TABLE_COLUMNS = [...COLUMNS, ["spark", "surprisal", "spark"]];
const DESCRIBE = {
  item: "the item's position in the corpus", tokens: "tokens in the trace",
  perplexity: "exp(-mean logprob) over the tokens whose logprob is known",
  mean_logprob: "mean logprob (nats)", min_logprob: "lowest logprob (nats)",
  max_surprisal: "highest surprisal, -logprob (nats)", mean_entropy: "mean entropy (nats)",
  flags: "what the source lost (trace.flags)",
};
const DESCENDING_FIRST = new Set(["perplexity", "max_surprisal", "mean_entropy", "tokens"]);

/** The text of a trace-table cell. */
export function cellText(data, row, name) {
  const column = data.columns[name];
  if (!column) return ""; // (a window of rows none of which has this column's values)
  const v = column[row];
  if (data.extra && data.extra.some(([extra]) => extra === name)) return extraText(v);
  switch (name) {
    case "predicted": case "gold": case "correct": return answerText(data.columns, row, name);
    case "item": case "tokens": return String(v);
    case "label": case "flags": return v;
    case "text": return v.slice(0, TEXT_CHARS).replace(/[\n\r\t]/g, (c) => (c === "\t" ? "\u2192" : "\u21b5"));
    case "perplexity": return formatStat(v, 2);
    default: return formatFixed(v, 3);
  }
}

const LONGEST = 200; // labels measured at most for the label column's width: those within 4 characters of the longest

/**
 * The columns not drawn: those with nothing known in any row (no flags; a server's traces: no entropy; a large
 * corpus: the kernel's list); for a corpus of divergences, rollouts or choices, the logprob columns, whose room
 * its own figures take (perplexity stays); a gold column that repeats the label (Choices.to_corpus labels by gold).
 */
function emptyColumns(data) {
  const out = new Set(data.windowed ? data.empty || [] : []);
  if (!data.windowed && data.columns.flags.every((s) => !s)) out.add("flags");
  if (!data.windowed && data.columns.mean_entropy.every((x) => Number.isNaN(x))) out.add("mean_entropy");
  if ((data.extra && data.extra.length) || data.answers) {
    for (const name of ["mean_logprob", "min_logprob", "max_surprisal"]) out.add(name);
  }
  if (data.answers && !data.windowed && data.columns.gold.every((g, i) => g === data.columns.label[i])) out.add("gold");
  return out;
}

/** The texts whose width can be the widest, of the label column (and a corpus of choices' predicted and gold):
 * two passes, no sort (1M labels); a large corpus's labels from the kernel. */
function longestTexts(data) {
  if (data.windowed) return { label: data.longest || [] };
  const out = {};
  for (const name of ["label", "predicted", "gold"]) {
    const values = data.columns[name];
    if (!values) continue;
    let most = 0;
    for (const s of values) most = Math.max(most, s.length);
    out[name] = [];
    for (const s of values) if (s.length >= most - 4 && out[name].length < LONGEST) out[name].push(s);
  }
  return out;
}

function filterBar(model, onChange, answers) {
  const bar = h("div", "lvx-toolbar");
  const f = model.get("filters") || {};
  const input = (cls, placeholder, value, type = "text") => {
    const el = h("input", `lvx-filter ${cls}`);
    el.type = type;
    el.placeholder = placeholder;
    el.value = value == null ? "" : String(value);
    el.setAttribute("aria-label", placeholder);
    el.addEventListener("input", onChange);
    return el;
  };
  const inputs = {
    text: input("lvx-f-text", "text contains", f.text),
    label: input("lvx-f-label", "label contains", f.label),
    ppl_min: input("lvx-f-min", "min", f.ppl_min, "number"),
    ppl_max: input("lvx-f-max", "max", f.ppl_max, "number"),
  };
  bar.append(inputs.text, inputs.label, h("span", "lvx-ctl-label", "perplexity"), inputs.ppl_min,
    h("span", "lvx-ctl-label", "to"), inputs.ppl_max);
  const answerInputs = answers ? answerFilters(f, onChange) : null; // a corpus of choices
  if (answerInputs) bar.append(...answerInputs.els);
  return { bar, inputs, answerInputs };
}

class CorpusRender {
  constructor(model, el) {
    this.model = model;
    this.data = decodeCorpus(model.get("_payload"));
    // a large corpus: rows from the kernel, a window at a time
    this.window = this.data.windowed ? new RowWindow(model, () => this.rowsNeedKernel()) : null;
    this.lower = {};
    this.root = h("div", "lvx-root");
    el.appendChild(this.root);
    this.tabs = h("div", "lvx-tabs");
    this.tabButtons = {
      traces: this.tabButton("traces", `Traces (${this.data.n.toLocaleString("en-US")})`),
      index: this.tabButton("index", "Surprise index"),
    };
    this.tabs.append(this.tabButtons.traces, this.tabButtons.index);
    this.tracesPanel = h("div", "lvx-panel lvx-traces");
    const { bar, inputs, answerInputs } = filterBar(model, () => this.readFilters(), this.data.answers);
    this.inputs = inputs;
    this.answerInputs = answerInputs;
    this.count = h("span", "lvx-count");
    bar.appendChild(this.count);
    const answerColumns = this.data.answers ? ANSWER_COLUMNS : [];
    const extra = this.data.extra || [];
    const empty = emptyColumns(this.data);
    const columns = [...TABLE_COLUMNS.slice(0, 2), ...answerColumns, TABLE_COLUMNS[2], ...extra, ...TABLE_COLUMNS.slice(3)]
      .filter(([name]) => !empty.has(name));
    this.table = new VirtualTable({
      columns,
      className: this.data.answers ? "lvx-trace-grid lvx-with-answers" : "lvx-trace-grid",
      cellText: (row, name) => this.cell(row, name),
      onPaint: (first, last) => this.window?.want(first, last),
      drawCell: (row, name, cell) => this.drawSparkCell(row, name, cell),
      onRowClick: (row) => this.select(row, -1),
      onHeaderClick: (name) => this.sortBy(name),
      unsortable: ["spark"],
      describe: DESCRIBE,
    });
    const longest = longestTexts(this.data);
    applyGrid(this.table.el, columns, estimate(columns, longest));
    this.note = h("div", "lvx-note");
    this.listenKeys();
    this.tracesPanel.append(bar, this.table.el);
    this.indexTab = new IndexTab(model, this.data, (item, position) => this.select(item, position));
    this.indexTab.el.classList.add("lvx-panel");
    this.root.append(this.tabs, this.tracesPanel, this.indexTab.el, this.note);
    this.handlers = {
      "change:sort change:filters": () => this.refresh(),
      "change:_rows": () => this.window && this.readWindow(),
      "change:selected_item change:_shown_item": () => this.showSelection(),
      "change:tab": () => this.showTab(),
    };
    for (const [name, cb] of Object.entries(this.handlers)) model.on(name, cb);
    this.showTab();
    this.refresh();
    this.showSelection();
    requestAnimationFrame(() => {
      const measured = measure(this.table.el, columns, longest); // (attached by then: the page's fonts apply)
      if (measured) applyGrid(this.table.el, columns, measured);
      this.table.reveal(model.get("selected_item"));
    });
  }

  /** Up / down arrows in the table move the selection through the rows as they are shown. */
  listenKeys() {
    const body = this.table.body;
    body.tabIndex = 0;
    body.setAttribute("aria-label", "traces: arrow keys move the selection");
    body.addEventListener("keydown", (e) => {
      if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
      const rows = this.table.rows;
      if (!rows.length) return;
      e.preventDefault();
      const at = rows.indexOf(this.model.get("selected_item"));
      const next = at < 0 ? 0 : Math.max(0, Math.min(rows.length - 1, at + (e.key === "ArrowDown" ? 1 : -1)));
      if (rows[next] < 0) return; // (a large corpus: a row whose window has not come yet)
      this.select(rows[next], -1);
      this.table.reveal(rows[next]);
    });
  }

  tabButton(tab, title) {
    const b = h("button", "lvx-tab", title);
    b.type = "button";
    b.dataset.tab = tab;
    b.addEventListener("click", () => {
      this.model.set("tab", tab);
      this.model.save_changes();
    });
    return b;
  }

  showTab() {
    const tab = this.model.get("tab") === "index" ? "index" : "traces";
    for (const [name, b] of Object.entries(this.tabButtons)) b.classList.toggle("lvx-active", name === tab);
    this.tracesPanel.hidden = tab !== "traces";
    this.indexTab.el.hidden = tab !== "index";
    if (tab === "traces") this.table.paint(true); // rows laid out while hidden had no height
    else this.indexTab.refresh(); // (and says so while the kernel computes the index)
  }

  /** The data and row of `item`'s cell: the whole payload's, or the window's (null: not in it yet). */
  rowOf(item) {
    if (!this.window) return [this.data, item];
    const k = this.window.at.get(item);
    return k === undefined || !this.window.data ? [null, -1] : [this.window.data, k];
  }

  cell(item, name) {
    const [data, row] = this.rowOf(item);
    return data ? cellText(data, row, name) : "";
  }

  drawSparkCell(item, name, cell) {
    if (name !== "spark") return false;
    const [data, row] = this.rowOf(item);
    let canvas = cell.firstChild;
    if (!canvas) {
      canvas = h("canvas", "lvx-spark");
      cell.appendChild(canvas);
    }
    this.sparkColor ??= getComputedStyle(this.root).getPropertyValue("--lv-accent").trim() || "#1976d2";
    if (!data) {
      canvas.getContext("2d")?.clearRect(0, 0, canvas.width, canvas.height);
      return true;
    }
    const { spark, sparkOffsets } = data;
    drawSpark(canvas, spark, sparkOffsets[row], sparkOffsets[row + 1], this.data.sparkMax, this.sparkColor);
    return true;
  }

  readFilters() {
    const v = (el) => el.value;
    this.model.set("filters", {
      text: v(this.inputs.text), label: v(this.inputs.label),
      ppl_min: this.inputs.ppl_min.value === "" ? null : Number(v(this.inputs.ppl_min)),
      ppl_max: this.inputs.ppl_max.value === "" ? null : Number(v(this.inputs.ppl_max)),
      ...(this.answerInputs ? this.answerInputs.read() : {}),
    });
    this.model.save_changes();
  }

  sortBy(name) {
    const sort = this.model.get("sort") || {};
    const descending = sort.column === name ? !sort.descending : DESCENDING_FIRST.has(name);
    this.model.set("sort", { column: name, descending });
    this.model.save_changes();
  }

  refresh() {
    const sort = this.model.get("sort") || { column: "", descending: false };
    // (a large corpus: the kernel's order, which follows sort and filters through `_rows`)
    const rows = this.window ? this.window.rows : visibleRows(this.data, this.model.get("filters") || {}, sort, this.lower);
    this.count.textContent = `${rows.length.toLocaleString("en-US")} of ${this.data.n.toLocaleString("en-US")} traces`;
    this.table.setSort(sort.column, sort.descending);
    this.table.setRows(rows, this.data.n);
  }

  /** Select a row (and pin a token): the kernel shows its trace below and confirms through `_shown_item`. */
  select(item, position) {
    this.wait?.();
    this.wait = ask(this.model, { traits: { pinned: position, selected_item: item } }, {
      noAnswer: () => this.needsKernel(item),
    });
    this.table.setSelected(item);
    if (this.model.get("_shown_item") === item) this.wait();
    else this.note.textContent = `Showing trace ${item}\u2026`;
  }

  readWindow() {
    this.window.read();
    if (this.rowsNote) { // (the kernel answered after all)
      this.rowsNote = false;
      this.note.textContent = "";
      this.note.classList.remove("lvx-warn");
    }
    this.refresh();
  }

  rowsNeedKernel() {
    this.rowsNote = true;
    this.note.textContent = "The rows beyond these come from the kernel (this corpus is too large to keep in the "
      + "page): run the cell again to browse every row.";
    this.note.classList.add("lvx-warn");
  }

  needsKernel(item) {
    if (this.model.get("_shown_item") === this.model.get("selected_item")) return;
    this.note.textContent = `Showing trace ${item} below needs the kernel: this is a saved view, and the trace below `
      + `is item ${this.model.get("_shown_item")}. Run the cell again to browse every trace.`;
    this.note.classList.add("lvx-warn");
  }

  showSelection() {
    const item = this.model.get("selected_item");
    this.table.setSelected(item);
    if (this.model.get("_shown_item") === item) {
      this.wait?.();
      this.note.classList.remove("lvx-warn");
      const label = item >= 0 ? this.cell(item, "label") : "";
      this.note.textContent = item >= 0 ? `Below: trace ${item} (${label})` : "";
    }
  }

  dispose() {
    this.wait?.();
    for (const [name, cb] of Object.entries(this.handlers)) this.model.off(name, cb);
    this.indexTab.dispose();
  }
}

function render({ model, el }) {
  const view = new CorpusRender(model, el);
  return () => view.dispose();
}

export default { render };
