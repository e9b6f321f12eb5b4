// The lens view (anywidget): a layers x tokens heatmap of a logit lens; hover a cell for that
// layer's alternatives, click a token to pin it and plot its probability and rank by layer.
// Long texts: alternatives are asked of the kernel per pinned token (a custom message with an
// id, matched to the answer); the view says it is waiting, and says so if no answer comes.

import "./lens.css";
import { LEGEND_GRADIENT, answerAlternatives, decodeLens, inlineAlternatives } from "./data.js";
import { createGrid } from "./grid.js";
import { plotCaption, showCell } from "./panel.js";
import { tokenPlots } from "./plot.js";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function render({ model, el: host }) {
  const root = el("div", "lvl-root");
  host.replaceChildren(root);
  const d = decodeLens(model.get("_payload"));
  if (!d) {
    root.append(el("div", "lvl-error", "this lens view has no data"));
    return () => {};
  }
  const name = model.get("model_name");
  root.append(el("div", "lvl-header", `${name ? `${name} · ` : ""}${d.L} layers × ${d.n} tokens · top ${d.k}`));
  const legend = el("div", "lvl-legend");
  const bar = el("span", "lvl-legend-bar");
  bar.style.background = LEGEND_GRADIENT;
  legend.append(
    el("span", "", "colour: probability of the actual token at that layer"),
    el("span", "lvl-legend-end", "0%"),
    bar,
    el("span", "lvl-legend-end", "100%"),
    el("span", "lvl-legend-note", "text: the layer's top guess (bold where it is the actual token)"),
  );
  root.append(legend);

  const answers = new Map(); // token -> [row][alternatives] from the kernel
  const errors = new Map(); // token -> message
  const pending = new Map(); // request id -> {i, timer}, until answered or timed out
  const asked = new Map(); // request id -> token, for every request this view sent
  let hovered = null; // [r, i]
  let nextId = 1;

  const detail = el("div", "lvl-detail");
  const plots = el("div", "lvl-plot");
  const grid = createGrid(d, {
    hover: (r, i) => ((hovered = [r, i]), grid.setHovered(r, i), showDetail()),
    leave: () => ((hovered = null), grid.setHovered(null), showDetail()),
    pin: (i) => {
      model.set("selected", model.get("selected") === i ? -1 : i);
      model.save_changes();
    },
  });
  root.append(grid.element, detail, plots);

  function alternatives(r, i) {
    if (d.inline) return { state: "ok", rows: inlineAlternatives(d, r, i) };
    if (answers.has(i)) return { state: "ok", rows: answers.get(i)[r] };
    if ([...pending.values()].some((p) => p.i === i)) return { state: "waiting" };
    if (errors.has(i)) return { state: "error", message: errors.get(i) };
    return { state: "ask" };
  }

  function showDetail() {
    const pinned = model.get("selected");
    const [r, i] = hovered ?? (pinned >= 0 ? [d.L - 1, pinned] : [null, null]);
    if (r == null) {
      detail.replaceChildren(el("div", "lvl-note", "hover a cell for that layer's alternatives; click a token to follow it through the layers"));
      delete detail.dataset.index;
      return;
    }
    showCell(detail, d, r, i, alternatives(r, i));
  }

  function ask(i) {
    if (d.inline || i <= 0 || answers.has(i) || [...pending.values()].some((p) => p.i === i)) return;
    errors.delete(i);
    const id = `lens-${Date.now()}-${nextId++}`;
    const seconds = model.get("request_timeout");
    const timer = setTimeout(() => {
      pending.delete(id);
      errors.set(i, `no answer from the kernel after ${seconds} s: is it still running? Click the token again to retry.`);
      showDetail();
    }, seconds * 1000);
    pending.set(id, { i, timer });
    asked.set(id, i);
    try {
      model.send({ type: "lens-detail", id, position: i });
    } catch (error) {
      clearTimeout(timer);
      pending.delete(id);
      errors.set(i, `could not ask the kernel: ${error}`);
    }
  }

  function onMessage(msg, buffers) {
    if (!msg || msg.type !== "lens-detail" || !asked.has(msg.id)) return; // another view's request
    const i = asked.get(msg.id);
    clearTimeout(pending.get(msg.id)?.timer);
    pending.delete(msg.id);
    if (answers.has(i)) return;
    // A late answer (after the timeout, e.g. the kernel was busy with a long cell) still counts.
    errors.delete(i);
    if (msg.error) errors.set(i, `the kernel could not compute this token's layers: ${msg.error}`);
    else {
      try {
        answers.set(i, answerAlternatives(msg, buffers));
      } catch (error) {
        errors.set(i, `the kernel's answer could not be read: ${error}`);
      }
    }
    showDetail();
  }
  model.on("msg:custom", onMessage);

  function showPinned() {
    const i = model.get("selected");
    grid.setPinned(i);
    plots.replaceChildren();
    if (i > 0) {
      plots.append(plotCaption(d, i), tokenPlots(d, i));
      ask(i);
    } else if (i === 0) {
      plots.append(el("div", "lvl-note", "the first token has nothing before it to predict it from"));
    }
    showDetail();
  }
  model.on("change:selected", showPinned);
  showPinned();

  return () => {
    model.off("msg:custom", onMessage);
    model.off("change:selected", showPinned);
    for (const { timer } of pending.values()) clearTimeout(timer);
    grid.destroy();
  };
}

export default { render };
