// The fields view's panel: a JSON's values by path, each a chip coloured by its probability, the
// least confident marked (and first, in "least confident first" order); beside the list, the
// selected value's detail in a box of fixed height (so a click moves nothing). Clicking a value
// sets `selected`; the kernel pins its first content token in the LogprobView below. "What
// else?" asks the kernel (a custom message) to continue each alternative; its answer comes back
// in `_what_else`. Token text and values go in with textContent only.

import "./fields.css";
import { ask } from "../toolkit/ask.js";
import { h } from "../toolkit/dom.js";
import { formatPercent } from "../toolkit/format.js";
import { visible } from "../toolkit/whitespace.js";
import { onDark, watchTheme } from "../logprob/theme_watch.js";
import {
  alternativesTitle, describeRow, elseOver, elseTitle, groupOf, P_LEGEND, P_MEANING, probStyle, probTitle, rowOrder,
  tokenLabel,
} from "./data.js";


function chip(text, style, className = "lvf-chip") {
  const el = h("span", className, text);
  if (style) {
    el.style.background = style.background;
    el.style.color = style.color;
  }
  return el;
}

class FieldsRender {
  constructor(model, el) {
    this.model = model;
    this.payload = model.get("_payload") || { rows: [] };
    this.root = h("div", "lvf-root");
    el.appendChild(this.root);
    this.head = h("div", "lvf-head");
    this.list = h("div", "lvf-list");
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", "the JSON's values");
    this.detail = h("div", "lvf-detail");
    const body = h("div", "lvf-body");
    body.append(this.list, this.detail);
    this.root.append(this.head, body);
    this.handlers = {
      "change:selected": () => this.showSelection(),
      "change:order": () => this.drawList(),
      "change:palette": () => this.drawAll(),
      "change:size": () => this.showSize(),
      "change:_what_else": () => this.drawDetail(),
    };
    for (const [name, cb] of Object.entries(this.handlers)) model.on(name, cb);
    this.showSize();
    this.dark = false;
    this.drawAll();
    // The colours follow the background as the LogprobView's do (reversed on a dark one).
    this.theme = watchTheme(this.root, this.dark, (dark) => {
      this.dark = dark;
      this.drawAll();
    });
    requestAnimationFrame(() => this.theme.check());
  }

  drawAll() {
    if (this.root.isConnected) this.dark = onDark(this.root);
    this.drawHead();
    this.drawList();
  }

  /** The style of a value with probability p, on this view's background. */
  style(p) {
    return probStyle(this.model.get("palette"), p, this.dark);
  }

  showSize() {
    this.root.classList.toggle("lv-size-projector", this.model.get("size") === "projector");
  }

  drawHead() {
    const { rows, least } = this.payload;
    this.head.replaceChildren();
    if (least >= 0) {
      const r = rows[least];
      const b = h("button", "lvf-least");
      b.type = "button";
      b.title = "select the least confident value";
      b.append(h("span", "lvf-least-label", "least confident:"), h("span", "lvf-path", r.path),
        chip(r.value, this.style(r.prob)), h("span", "lvf-p", formatPercent(r.prob)));
      b.addEventListener("click", () => this.select(least));
      this.head.appendChild(b);
    } else {
      this.head.appendChild(h("span", "lvf-muted", "no values"));
    }
    // what every p in the list is, named once (the detail shows the p with the opening quote beside it)
    const legend = h("span", "lvf-legend", P_LEGEND);
    legend.title = P_MEANING;
    this.head.appendChild(legend);
    const order = h("button", "lvf-order");
    order.type = "button";
    order.title = "the order of the values: as the JSON is written, or the least confident first";
    const label = () => (this.model.get("order") === "confidence" ? "least confident first" : "as written");
    order.textContent = label();
    order.addEventListener("click", () => {
      this.model.set("order", this.model.get("order") === "confidence" ? "document" : "confidence");
      this.model.save_changes();
      order.textContent = label();
    });
    this.head.appendChild(order);
  }

  drawList() {
    const { rows, least } = this.payload;
    this.list.replaceChildren();
    let group = null;
    for (const i of rowOrder(this.payload, this.model.get("order"))) {
      const r = rows[i];
      const g = groupOf(r);
      if (g && g !== group && this.model.get("order") !== "confidence") this.list.appendChild(h("div", "lvf-group", g));
      group = g;
      const line = h("div", "lvf-row");
      line.dataset.row = String(i);
      line.setAttribute("role", "option");
      const value = chip(r.value, this.style(r.prob), "lvf-chip lvf-value");
      value.tabIndex = 0;
      const p = h("span", "lvf-p", formatPercent(r.prob));
      p.title = probTitle(r);
      line.append(h("span", "lvf-path", r.path), value, p);
      if (i === least) line.appendChild(h("span", "lvf-badge", "least confident"));
      line.addEventListener("click", () => this.select(i));
      value.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          this.select(i);
        }
      });
      this.list.appendChild(line);
    }
    const notes = [this.payload.error, ...(this.payload.warnings || [])].filter(Boolean);
    for (const note of notes) this.list.appendChild(h("div", "lvf-warn", note));
    this.showSelection();
  }

  select(i) {
    this.model.set("selected", i);
    this.model.save_changes();
  }

  showSelection() {
    const sel = this.model.get("selected");
    for (const line of this.list.querySelectorAll(".lvf-row")) {
      const on = Number(line.dataset.row) === sel;
      line.classList.toggle("lvf-selected", on);
      line.setAttribute("aria-selected", on ? "true" : "false");
    }
    this.drawDetail();
  }

  drawDetail() {
    const sel = this.model.get("selected");
    const r = this.payload.rows[sel];
    this.detail.replaceChildren();
    this.detail.scrollTop = 0; // new content is read from its top (a kept scroll would cut its first lines)
    if (!r) {
      this.detail.appendChild(h("div", "lvf-muted", "Click a value: its tokens, and what else the model weighed there."));
      return;
    }
    const title = h("div", "lvf-title");
    title.append(h("span", "lvf-path", r.path), chip(r.value, this.style(r.prob)));
    this.detail.appendChild(title);
    for (const line of describeRow(r)) this.detail.appendChild(h("div", "lvf-line", line));
    const answer = this.model.get("_what_else") || {};
    const done = answer.row === sel && answer.state === "done";
    this.detail.appendChild(h("div", "lvf-sub", done ? elseTitle(r) : alternativesTitle(r)));
    const alts = h("div", "lvf-alts");
    if (done) {
      // the values it would have written after each alternative, in place of the alternatives alone
      for (const item of answer.items) {
        const a = h("span", item.chosen ? "lvf-else-row lvf-chosen" : "lvf-else-row");
        a.title = `after ${tokenLabel(item.token)}${item.chosen ? " (as written)" : ""}${item.complete ? "" : `: ${item.note}`}`;
        a.append(chip(item.value + (item.complete ? "" : "\u2026"), this.style(item.prob)),
          h("span", "lvf-p", formatPercent(item.prob)));
        alts.appendChild(a);
      }
    } else {
      for (const [tok, p] of r.alternatives) {
        const a = h("span", tok === r.at_token ? "lvf-alt lvf-chosen" : "lvf-alt");
        a.append(h("span", "lvf-tok", visible(tok)), h("span", "lvf-p", formatPercent(p)));
        alts.appendChild(a);
      }
      if (!r.alternatives.length) alts.appendChild(h("span", "lvf-muted", "(the trace holds no alternatives here)"));
    }
    this.detail.appendChild(alts);
    if (done) this.detail.appendChild(h("div", "lvf-muted lvf-over", elseOver(r)));
    this.drawWhatElse(r, sel, answer, done);
  }

  drawWhatElse(r, sel, answer, done) {
    if (!this.payload.can_branch) {
      this.detail.appendChild(h("div", "lvf-muted lvf-hint", "With a runner, fields.view(runner=lv.load()), "
        + "\u201cWhat else?\u201d continues each alternative to the end of the value."));
      return;
    }
    if (done) return;
    const mine = answer.row === sel;
    const button = h("button", "lvf-what-else", "What else would it have put here?");
    button.type = "button";
    button.disabled = mine && answer.state === "running";
    button.addEventListener("click", () => this.askWhatElse(sel));
    this.detail.appendChild(button);
    let note = null;
    if (this.waiting === sel && !mine) note = h("div", "lvf-muted", "Asking the kernel\u2026");
    else if (mine && answer.state === "running") {
      note = h("div", "lvf-muted", `Continuing each alternative at token ${r.at + 1}\u2026`);
    } else if (mine && (answer.state === "error" || answer.state === "needs-kernel")) note = h("div", "lvf-warn", answer.error);
    if (note) this.detail.appendChild(note);
  }

  askWhatElse(sel) {
    this.waiting = sel;
    this.wait?.();
    this.wait = ask(this.model, { message: { type: "what_else", row: sel } }, {
      noAnswer: () => {
        const answer = this.model.get("_what_else") || {};
        if (answer.row === sel && answer.state) return; // acknowledged: the kernel is at it
        this.waiting = null;
        this.model.set("_what_else", { row: sel, state: "needs-kernel", items: [], over: "",
          error: "\u201cWhat else?\u201d needs the kernel, which did not answer: run the cell again." });
      },
    });
    this.drawDetail();
  }

  dispose() {
    this.wait?.();
    this.theme.stop();
    for (const [name, cb] of Object.entries(this.handlers)) this.model.off(name, cb);
  }
}

function render({ model, el }) {
  const view = new FieldsRender(model, el);
  return () => view.dispose();
}

export default { render };
