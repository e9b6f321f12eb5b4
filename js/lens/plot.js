// The pinned token's story: the actual token's probability and rank after each block, as two
// small inline SVG line plots (no plotting library: the bundle stays small and offline).

import { percentOfLogprob as percent } from "../toolkit/format.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 300;
const H = 150;
const PAD = { left: 44, right: 10, top: 12, bottom: 28 };

function svgEl(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text != null) e.textContent = text;
  return e;
}

/**
 * One plot: points (layer, y) with y mapped by `scale` onto [0, 1] (1 at the top).
 * ticks: [[value, label]] on the y axis. Each point is a circle.lvl-point with data-layer and
 * data-value, and a <title> saying what it is.
 */
function linePlot({ cls, title, layers, values, scale, ticks, describe }) {
  const svg = svgEl("svg", { class: `lvl-svg ${cls}`, viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" });
  svg.append(svgEl("title", {}, title));
  const x0 = PAD.left;
  const x1 = W - PAD.right;
  const y0 = H - PAD.bottom;
  const y1 = PAD.top;
  const lo = layers[0];
  const hi = layers[layers.length - 1];
  const xOf = (layer) => (hi === lo ? (x0 + x1) / 2 : x0 + ((layer - lo) / (hi - lo)) * (x1 - x0));
  const yOf = (v) => y0 - scale(v) * (y0 - y1);
  svg.append(svgEl("line", { class: "lvl-axis-line", x1: x0, y1: y0, x2: x1, y2: y0 }));
  svg.append(svgEl("line", { class: "lvl-axis-line", x1: x0, y1: y0, x2: x0, y2: y1 }));
  for (const [v, label] of ticks) {
    const y = yOf(v);
    svg.append(svgEl("line", { class: "lvl-grid-line", x1: x0, y1: y, x2: x1, y2: y }));
    svg.append(svgEl("text", { class: "lvl-tick", x: x0 - 4, y: y + 3, "text-anchor": "end" }, label));
  }
  for (const layer of [lo, Math.round((lo + hi) / 2), hi]) {
    svg.append(svgEl("text", { class: "lvl-tick", x: xOf(layer), y: y0 + 12, "text-anchor": "middle" }, String(layer)));
  }
  svg.append(svgEl("text", { class: "lvl-tick", x: (x0 + x1) / 2, y: H - 3, "text-anchor": "middle" }, "layer"));
  const points = layers.map((layer, r) => [xOf(layer), yOf(values[r])]);
  svg.append(svgEl("polyline", { class: "lvl-line", points: points.map((p) => p.join(",")).join(" "), fill: "none" }));
  layers.forEach((layer, r) => {
    const dot = svgEl("circle", { class: "lvl-point", cx: points[r][0], cy: points[r][1], r: 2.5 });
    dot.dataset.layer = String(layer);
    dot.dataset.value = String(values[r]);
    dot.append(svgEl("title", {}, describe(layer, values[r])));
    svg.append(dot);
  });
  return svg;
}

/** The two plots for token i of decoded lens data `d`, in a .lvl-plots element. */
export function tokenPlots(d, i) {
  const probs = [];
  const ranks = [];
  for (let r = 0; r < d.L; r++) {
    probs.push(Math.exp(d.logprobs[r * d.n + i]));
    ranks.push(d.ranks[r * d.n + i]);
  }
  const box = document.createElement("div");
  box.className = "lvl-plots";
  box.dataset.index = String(i);
  box.append(
    linePlot({
      cls: "lvl-prob-plot",
      title: "probability of the actual token after each layer",
      layers: d.layers,
      values: probs,
      scale: (p) => p,
      ticks: [[0, "0%"], [0.5, "50%"], [1, "100%"]],
      describe: (layer, p) => `layer ${layer}: ${percent(Math.log(p))}`,
    }),
  );
  const maxRank = Math.max(10, ...ranks);
  const logMax = Math.log10(maxRank);
  const rankTicks = [[1, "1"]];
  for (let t = 10; t <= maxRank; t *= 10) rankTicks.push([t, t >= 1000 ? `${t / 1000}k` : String(t)]);
  box.append(
    linePlot({
      cls: "lvl-rank-plot",
      title: "rank of the actual token after each layer (1 = the layer's top guess; log scale)",
      layers: d.layers,
      values: ranks,
      scale: (rank) => 1 - Math.log10(Math.max(rank, 1)) / logMax, // rank 1 at the top
      ticks: rankTicks,
      describe: (layer, rank) => `layer ${layer}: rank ${rank}`,
    }),
  );
  return box;
}
