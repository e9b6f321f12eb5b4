// The lens view (anywidget): a layers x tokens heatmap of a logit lens; hover a cell for that
// layer's alternatives, click a token to pin it and plot its probability and rank by layer.
// Long texts: alternatives are asked of the kernel per pinned token (requests.js); the view says
// it is waiting, and says so if no answer comes.

import "./lens.css";
import { gradientOf, paletteColor } from "../toolkit/colors.js";
import { h as el } from "../toolkit/dom.js";
import { decodeLens, inlineAlternatives } from "./data.js";
import { createGrid } from "./grid.js";
import { layerRows } from "./layers.js";
import { plotCaption, showCell } from "./panel.js";
import { tokenPlots } from "./plot.js";
import { DetailRequests } from "./requests.js";

const FIRST_TOKEN = "the first token has nothing before it to predict it from";

function header(d, name) {
  const head = el("div", "lvl-header", `${name ? `${name} · ` : ""}${d.L} layers × ${d.n} tokens · top ${d.k}`);
  const legend = el("div", "lvl-legend");
  const bar = el("span", "lvl-legend-bar");
  bar.style.background = gradientOf((t) => paletteColor("viridis", t));
  legend.append(
    el("span", "", "colour: probability of the actual token at that layer"),
    el("span", "lvl-legend-end", "0%"),
    bar,
    el("span", "lvl-legend-end", "100%"),
    el("span", "lvl-legend-note", "text: the layer's top guess (bold where it is the actual token)"),
  );
  return [head, legend];
}

function render({ model, el: host }) {
  const root = el("div", "lvl-root");
  host.replaceChildren(root);
  const d = decodeLens(model.get("_payload"));
  if (!d) {
    root.append(el("div", "lvl-error", "this lens view has no data"));
    return () => {};
  }
  root.append(...header(d, model.get("model_name")));
  let hovered = null; // [r, i]
  const detail = el("div", "lvl-detail");
  const plots = el("div", "lvl-plot");

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
  /** Row r's alternatives of token i: sent with the view, or what the kernel answered (or its state). */
  function alternatives(r, i) {
    if (d.inline) return { state: "ok", rows: inlineAlternatives(d, r, i) };
    const known = requests.state(i);
    return known.state === "ok" ? { state: "ok", rows: known.rows[r] } : known;
  }
  const requests = new DetailRequests(model, showDetail);
  const grid = createGrid(d, {
    hover: (r, i) => ((hovered = [r, i]), grid.setHovered(r, i), showDetail()),
    leave: () => ((hovered = null), grid.setHovered(null), showDetail()),
    pin: (i) => {
      model.set("selected", model.get("selected") === i ? -1 : i);
      model.save_changes();
    },
  });
  const layersBox = el("div", "lvl-layers-box"); // entropy and KL to the final layer, per layer
  root.append(grid.element, detail, plots, layersBox);

  function showPinned() {
    const i = model.get("selected");
    grid.setPinned(i);
    layerRows(layersBox, d, i);
    plots.replaceChildren();
    if (i > 0) {
      plots.append(plotCaption(d, i), tokenPlots(d, i));
      if (!d.inline) requests.ask(i);
    } else if (i === 0) {
      plots.append(el("div", "lvl-note", FIRST_TOKEN));
    }
    showDetail();
  }
  model.on("change:selected", showPinned);
  showPinned();

  return () => {
    requests.dispose();
    model.off("change:selected", showPinned);
    grid.destroy();
  };
}

export default { render };
