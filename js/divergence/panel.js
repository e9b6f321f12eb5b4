// The divergence view's hover panel: for one position, the base's and the candidate's alternatives
// in one token order (base's top-K, then the candidate's others), one column each, and Δp.
// Token text goes in as text (h() uses textContent), never as markup.

import { h } from "../toolkit/dom.js";
import { visible } from "../toolkit/whitespace.js";
import { deltaText, klText, sideP } from "./decode.js";

function cell(text, className) {
  return h("td", className, text);
}

function title(data, i, flip) {
  const head = h("div", "lvd-panel-title");
  const dp = data.deltaP[i];
  const words = ` \u00b7 KL ${klText(data.kldLow[i], data.kldHigh[i])} nats \u00b7 \u0394p ${deltaText(data.baseLogprob[i], data.candLogprob[i])}` +
    `${flip ? " \u00b7 flip: the top tokens differ" : ""}`;
  head.append(h("span", null, `token ${i} `), h("code", "lvd-token-text", visible(data.tokens[i])), h("span", "lvd-title-numbers", words));
  head.dataset.deltaP = String(dp);
  return head;
}

/** Fill `panel` for position i (-1 or an unscored position: the placeholder). */
export function showPanel(panel, data, i, labels, flips) {
  panel.replaceChildren();
  panel.dataset.index = String(i);
  if (i < 0 || Number.isNaN(data.deltaP[i])) {
    const why = i < 0 ? "Hover a token" : `Token ${i} is not scored (no prediction of it on both sides); hover another`;
    panel.appendChild(h("div", "lvd-placeholder", `${why} to see both sides' alternatives side by side, with \u0394p = candidate \u2212 base.`));
    return;
  }
  const table = h("table", "lvd-alts");
  const head = h("tr");
  head.append(h("th", null, "token"), h("th", "lvd-col-base", labels[0] ?? "base"), h("th", "lvd-col-cand", labels[1] ?? "candidate"), h("th", null, "\u0394p"));
  table.appendChild(head);
  for (let j = data.altStart[i]; j < data.altStart[i + 1]; j++) {
    const tr = h("tr", data.altChosen[j] ? "lvd-alt lvd-chosen" : "lvd-alt");
    const tok = h("td");
    tok.appendChild(h("code", "lvd-alt-text", visible(data.altTexts[j])));
    tr.append(tok, cell(sideP(data.altBase[j], data.baseFloor[i]), "lvd-p-base"), cell(sideP(data.altCand[j], data.candFloor[i]), "lvd-p-cand"),
      cell(deltaText(data.altBase[j], data.altCand[j]), "lvd-dp"));
    table.appendChild(tr);
  }
  panel.append(title(data, i, flips.includes(i)), table);
}
