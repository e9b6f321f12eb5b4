// The legend: colour mode and palette selectors, the scale with editable bounds (or GLTR's rank
// buckets), and the swatches for unknown and prompt tokens. It reads and sets the model's
// colour traits; the view recolours on their change events.

import { PALETTES, rgb } from "../toolkit/colors.js";
import { h, select } from "../toolkit/dom.js";
import { gradient, MODES, RANK_BUCKETS, ticks } from "./modes.js";

/** Fill `legend` for the colour scale `sc`; `setTraits({name: value})` writes traits back. */
export function buildLegend(legend, sc, model, setTraits) {
  legend.replaceChildren();
  const controls = h("span", "lv-legend-controls");
  const modes = Object.entries(MODES).filter(([, m]) => !m.available || m.available(model)).map(([k, m]) => [k, m.label]);
  controls.appendChild(select(modes, model.get("color_mode"), "lv-mode", (v) => setTraits({ color_mode: v, color_range: null })));
  if (sc.range) {
    const palettes = Object.keys(PALETTES).map((p) => [p, p]);
    controls.appendChild(select(palettes, model.get("palette"), "lv-palette", (v) => setTraits({ palette: v })));
  }
  // The presentation size: everything in the view at 1.25 times (theme.css), for a class.
  const sizes = [["normal", "normal size"], ["projector", "projector size"]];
  controls.appendChild(select(sizes, model.get("size") || "normal", "lv-size", (v) => setTraits({ size: v })));
  legend.appendChild(controls);
  if (sc.range) {
    const wrap = h("span", "lv-legend-range");
    const bound = (value, cls, which) => {
      const input = h("input", cls);
      input.type = "number";
      input.step = "any";
      input.value = String(value);
      input.title = which === 0 ? "legend minimum" : "legend maximum";
      input.addEventListener("change", () => {
        const next = [...sc.range];
        next[which] = Number(input.value);
        if (Number.isFinite(next[which]) && next[1] > next[0]) setTraits({ color_range: next });
        else input.value = String(sc.range[which]);
      });
      return input;
    };
    wrap.appendChild(bound(sc.range[0], "lv-range-lo", 0));
    const scaleEl = h("div", "lv-legend-scale");
    const bar = h("div", "lv-legend-bar");
    bar.style.background = gradient(sc);
    scaleEl.appendChild(bar);
    const tickEl = h("div", "lv-legend-ticks");
    for (const t of ticks(sc)) tickEl.appendChild(h("span", null, t));
    scaleEl.appendChild(tickEl);
    wrap.appendChild(scaleEl);
    wrap.appendChild(bound(sc.range[1], "lv-range-hi", 1));
    legend.appendChild(wrap);
  } else {
    for (const b of RANK_BUCKETS) {
      const item = h("span", "lv-legend-item lv-bucket");
      const sw = h("span", "lv-swatch");
      sw.style.background = rgb(b.rgb);
      item.appendChild(sw);
      item.appendChild(document.createTextNode(b.label));
      legend.appendChild(item);
    }
  }
  if (sc.mode.never) {
    const item = h("span", "lv-legend-item lv-never");
    const sw = h("span", "lv-swatch");
    sw.style.background = rgb(sc.mode.never.rgb);
    item.append(sw, sc.mode.never.label);
    legend.appendChild(item);
  }
  for (const [cls, label] of [["lv-swatch-unknown", "unknown"], ["lv-swatch-prompt", "prompt"]]) {
    const item = h("span", "lv-legend-item");
    item.appendChild(h("span", `lv-swatch ${cls}`));
    item.appendChild(document.createTextNode(label));
    legend.appendChild(item);
  }
}
