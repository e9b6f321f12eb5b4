// The lens view's per-layer rows: for each layer, the entropy of its next-token distribution and
// its KL divergence to the model's final distribution (nats), averaged over the text's tokens, or
// of the pinned token when one is pinned. Where the layers' distributions settle towards the
// output (tuned-lens plots the same). Each value is also in a data- attribute, for tests.

import { h } from "../toolkit/dom.js";

/** Per layer, the mean over tokens 1..n-1 of an [L, N] array (NaN skipped); token i's values with `at`. */
export function perLayer(values, L, n, at = -1) {
  const out = new Float64Array(L);
  for (let r = 0; r < L; r++) {
    if (at >= 0) {
      out[r] = values[r * n + at];
      continue;
    }
    let sum = 0;
    let count = 0;
    for (let i = 1; i < n; i++) {
      const v = values[r * n + i];
      if (Number.isFinite(v)) (sum += v), count++;
    }
    out[r] = count ? sum / count : NaN;
  }
  return out;
}

const fmt = (v) => (Number.isFinite(v) ? v.toFixed(2) : "\u2013");

function barCell(value, max, cls) {
  const cellEl = h("span", `lvl-layer-val ${cls}`);
  const bar = h("span", "lvl-layer-bar");
  bar.style.width = `${Number.isFinite(value) && max > 0 ? Math.min(1, value / max) * 100 : 0}%`;
  cellEl.append(bar, h("span", "lvl-layer-num", fmt(value)));
  cellEl.setAttribute("data-value", String(value));
  return cellEl;
}

/** Fill `box` with one row per layer: entropy and KL to the final layer (of token `at`, or the mean). */
export function layerRows(box, d, at = -1) {
  const token = at > 0 ? at : -1;
  const entropy = perLayer(d.entropy, d.L, d.n, token);
  const kl = d.kl ? perLayer(d.kl, d.L, d.n, token) : null;
  const maxOf = (xs) => xs.reduce((m, v) => (Number.isFinite(v) && v > m ? v : m), 0);
  const caption = token > 0 ? "this token, per layer" : "mean over the tokens, per layer";
  box.replaceChildren(h("div", "lvl-layers-caption", `${caption}: entropy of the layer's guess and its KL to the final distribution (nats)`));
  const table = h("div", "lvl-layers");
  table.append(h("span", "lvl-layers-head", "layer"), h("span", "lvl-layers-head", "entropy"), h("span", "lvl-layers-head", "KL to final"));
  const maxE = maxOf(entropy);
  const maxK = kl ? maxOf(kl) : 0;
  for (let r = 0; r < d.L; r++) {
    const row = h("div", "lvl-layer-row");
    row.setAttribute("data-layer", String(d.layers[r]));
    row.append(h("span", "lvl-layer-name", String(d.layers[r])), barCell(entropy[r], maxE, "lvl-layer-entropy"));
    row.append(kl ? barCell(kl[r], maxK, "lvl-layer-kl") : h("span", "lvl-layer-val", "\u2013"));
    table.append(row);
  }
  box.append(table);
}
