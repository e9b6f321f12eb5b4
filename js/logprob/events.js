// The LogprobView's events, delegated to its root: one listener each, whatever the number of
// tokens. Hover shows a token's chart, click pins it, arrows move the pin, Escape releases it.
// With the `branching` trait on, a click on an alternative (or `b` on a pinned token) asks the
// kernel to branch there: a custom message {event: "alternative", at, token_id, token}.
// A click on a row of the panel's overview (overview.js) pins that row's token.

import { leastConfident } from "./stats.js";
import { redrawServed } from "./served.js";

const ALT_ROW = ".lv-alt-row:not(.lv-extra)";

function tokenIndex(view, target) {
  const t = target instanceof Element ? target.closest(".lv-token") : null;
  return t && view.root.contains(t) ? Number(t.getAttribute("data-index")) : -1;
}

function askToBranch(view, at, j) {
  const { data } = view;
  view.model.send({ event: "alternative", at, token_id: data.altId(at, j), token: data.altText(at, j) });
}

/** The jump button: pin the next of the least-confident tokens. */
function jump(view, count) {
  view.jumps ??= leastConfident(view.data.logprobs, count);
  if (!view.jumps.length) return;
  view.jumpAt = (view.jumpAt + 1) % view.jumps.length;
  view.jumpBtn.textContent = `least confident ${view.jumpAt + 1}/${view.jumps.length} \u25b8`;
  view.reveal(view.jumps[view.jumpAt]);
  view.setSelected(view.jumps[view.jumpAt]);
}

/**
 * A row of the overview: pin its token as a click on it in the text does, scrolling the text box
 * (never the page) to it. The row goes away with the overview (the pinned chart takes its place):
 * the focus goes to the view, where it stays for ← → and Escape, as after a click on a token.
 */
function pinFromOverview(view, i) {
  view.root.focus({ preventScroll: true });
  view.reveal(i);
  if (view.pinned() === i) view.markPinned(); // (pinned already: its chart again, as a click would not unpin it here)
  else view.setSelected(i);
}

function onClick(view, e, jumps) {
  if (!view.data) return;
  if (e.target === view.jumpBtn) return jump(view, jumps);
  const row = e.target instanceof Element ? e.target.closest(".lv-overview-row") : null;
  if (row && view.panel.el.contains(row)) return pinFromOverview(view, Number(row.dataset.index));
  if (view.strip.el.contains(e.target)) {
    const i = view.strip.indexAt(e, view.data.n);
    view.reveal(i);
    return view.setSelected(i);
  }
  const panel = view.panel.el;
  const alt = e.target instanceof Element && panel.contains(e.target) ? e.target.closest(ALT_ROW) : null;
  if (alt && view.shown >= 0 && view.model.get("branching")) {
    const j = [...alt.parentNode.children].filter((r) => r.matches(ALT_ROW)).indexOf(alt);
    return askToBranch(view, view.shown, j);
  }
  const i = tokenIndex(view, e.target);
  if (i >= 0) view.setSelected(view.pinned() === i ? -1 : i);
}

/** `b` on a pinned token: branch with the alternative under the pointer, else the likeliest not chosen. */
function branchFromPinned(view, p) {
  const { data } = view;
  let j = view.shown === p ? [...view.panel.el.querySelectorAll(ALT_ROW)].findIndex((r) => r.matches(":hover")) : -1;
  for (let a = 0; j < 0 && a < data.topCount(p); a++) if (data.altId(p, a) !== data.tokenIds[p]) j = a;
  if (j >= 0) askToBranch(view, p, j);
}

function onKey(view, e) {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) {
    e.stopPropagation(); // typing in the legend is not a notebook shortcut
    return;
  }
  const { data } = view;
  const p = view.pinned();
  if (e.key === "Escape" && p >= 0) view.setSelected(-1);
  else if ((e.key === "ArrowRight" || e.key === "ArrowLeft") && data && data.n) {
    const start = p >= 0 ? p : view.shown >= 0 ? view.shown : 0;
    const next = Math.max(0, Math.min(data.n - 1, start + (e.key === "ArrowRight" ? 1 : -1)));
    view.reveal(next);
    view.setSelected(next);
  } else if (e.key === "b" && p >= 0 && data && view.model.get("branching")) branchFromPinned(view, p);
  else if (e.key === "w" && p >= 0 && data) view.why.askFromKey(); // why.js
  else return;
  e.preventDefault();
  e.stopPropagation();
}

function onMove(view, e) {
  const { data } = view;
  if (!data || !data.n || !view.strip.el.contains(e.target)) return;
  const i = view.strip.indexAt(e, data.n);
  view.reveal(i); // first: the hover box measures the token where it is laid out
  view.showChart(i);
}

/** Attach the DOM and trait listeners of `view` (a LogprobRender); returns the function that detaches them. */
export function listen(view, jumps = 20) {
  const { root, model } = view;
  const dom = [
    ["mouseover", (e) => ((i) => i >= 0 && view.showChart(i))(tokenIndex(view, e.target))],
    ["mouseleave", (e) => e.target.classList && (e.target.classList.contains("lv-text") || e.target.classList.contains("lv-strip")) && view.showChart(view.pinned(), true), true],
    ["click", (e) => onClick(view, e, jumps)],
    ["keydown", (e) => onKey(view, e)],
    ["mousemove", (e) => onMove(view, e)],
  ];
  for (const [name, fn, capture] of dom) root.addEventListener(name, fn, !!capture);
  const traits = [
    ["change:selected", () => view.markPinned()],
    ["change:color_mode", () => view.recolor()],
    ["change:palette", () => (view.recolor(), view.redrawStrip())],
    ["change:color_range", () => view.recolor()],
    ["change:show_ids", () => view.showChart(view.shown, true)],
    ["change:size", () => view.onSize()],
    ["change:forks", () => view.onForks()],
    ["change:explored", () => view.showChart(view.shown, true)],
    ["change:branching", () => root.classList.toggle("lv-branchable", !!model.get("branching"))],
    ["change:_served", () => redrawServed(view)],
  ];
  for (const [name, fn] of traits) model.on(name, fn);
  const resize = typeof ResizeObserver === "function" ? new ResizeObserver(() => view.onResize()) : null;
  if (resize) resize.observe(root);
  return () => {
    for (const [name, fn, capture] of dom) root.removeEventListener(name, fn, !!capture);
    for (const [name, fn] of traits) model.off(name, fn);
    if (resize) resize.disconnect();
  };
}
