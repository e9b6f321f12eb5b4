// The legend: colour mode and palette selectors, the scale with editable bounds (or GLTR's rank
// buckets), and the swatches for unknown and prompt tokens. It reads and sets the model's
// colour traits; the view recolours on their change events.

import { PALETTES, rgb } from "../toolkit/colors.js";
import { h, select } from "../toolkit/dom.js";
import { gradient, MODES, RANK_BUCKETS, ticks } from "./modes.js";

/** The colour mode, palette and presentation size selectors. */
function controls(sc, model, setTraits) {
  const box = h("span", "lv-legend-controls");
  const modes = Object.entries(MODES).filter(([, m]) => !m.available || m.available(model)).map(([k, m]) => [k, m.label]);
  box.appendChild(select(modes, model.get("color_mode"), "lv-mode", (v) => setTraits({ color_mode: v, color_range: null })));
  if (sc.range) {
    const palettes = Object.keys(PALETTES).map((p) => [p, p]);
    box.appendChild(select(palettes, model.get("palette"), "lv-palette", (v) => setTraits({ palette: v })));
  }
  // The presentation size: everything in the view at 1.25 times (theme.css), for a class.
  const sizes = [["normal", "normal size"], ["projector", "projector size"]];
  box.appendChild(select(sizes, model.get("size") || "normal", "lv-size", (v) => setTraits({ size: v })));
  return box;
}

/**
 * An editable bound of the scale (`which`: 0 the minimum, 1 the maximum); a bad or empty value is
 * put back. A text field with a decimal keypad, not type=number: no spinner (whose step of 1 crosses
 * a probability's whole range) and no shadow controls, which were about 1 ms of a first render.
 */
function boundInput(sc, which, setTraits) {
  const input = h("input", which === 0 ? "lv-range-lo" : "lv-range-hi");
  input.type = "text";
  input.inputMode = "decimal";
  input.value = String(sc.range[which]);
  input.title = which === 0 ? "legend minimum" : "legend maximum";
  input.addEventListener("change", () => {
    const next = [...sc.range];
    next[which] = input.value.trim() === "" ? NaN : Number(input.value); // (Number("") is 0)
    if (Number.isFinite(next[which]) && next[1] > next[0]) setTraits({ color_range: next });
    else input.value = String(sc.range[which]);
  });
  return input;
}

/** A continuous scale: its gradient and ticks between the two editable bounds. */
function rangeScale(sc, setTraits) {
  const wrap = h("span", "lv-legend-range");
  const scaleEl = h("div", "lv-legend-scale");
  const bar = h("div", "lv-legend-bar");
  bar.style.background = gradient(sc);
  const tickEl = h("div", "lv-legend-ticks");
  for (const t of ticks(sc)) tickEl.appendChild(h("span", null, t));
  scaleEl.append(bar, tickEl);
  wrap.append(boundInput(sc, 0, setTraits), scaleEl, boundInput(sc, 1, setTraits));
  return wrap;
}

/** A legend item: a swatch (of colour `color`, or styled by the class `swatchClass`) and its label. */
function swatchItem(itemClass, label, color, swatchClass = "") {
  const item = h("span", itemClass);
  const sw = h("span", `lv-swatch${swatchClass ? ` ${swatchClass}` : ""}`);
  if (color) sw.style.background = rgb(color);
  item.append(sw, document.createTextNode(label));
  return item;
}

/** Fill `legend` for the colour scale `sc`; `setTraits({name: value})` writes traits back. */
export function buildLegend(legend, sc, model, setTraits) {
  legend.replaceChildren(controls(sc, model, setTraits));
  if (sc.range) legend.appendChild(rangeScale(sc, setTraits));
  else for (const b of RANK_BUCKETS) legend.appendChild(swatchItem("lv-legend-item lv-bucket", b.label, b.rgb));
  if (sc.mode.never) legend.appendChild(swatchItem("lv-legend-item lv-never", sc.mode.never.label, sc.mode.never.rgb));
  for (const [cls, label] of [["lv-swatch-unknown", "unknown"], ["lv-swatch-prompt", "prompt"]]) {
    legend.appendChild(swatchItem("lv-legend-item", label, null, cls));
  }
}
