// The rollout kind of the divergence view (payload kind "rollout", logprob_viz.views.divergence.rollout):
// one RL rollout coloured by |Δ| = |log π_b − log π_a|, the tokens whose ratio leaves [1/clip, clip]
// underlined, forking tokens overlined. Its decode, header and hover panel; the rest is view.js's.
// Token text goes in as text (h() uses textContent), never as markup.

import { readTexts, sizedArray } from "../toolkit/codec.js";
import { h } from "../toolkit/dom.js";
import { formatLogprob, formatPercent } from "../toolkit/format.js";
import { visible } from "../toolkit/whitespace.js";

const PER_TOKEN = ["logprob_a", "logprob_b", "delta", "ratio", "k1", "k2", "k3"];

/** The decoded rollout payload: tokens and the per-token arrays (camelCase). */
export function decodeRollout(payload) {
  const n = payload.n;
  const out = { n, kind: "rollout", tokens: readTexts(payload.tokens, "tokens") };
  if (out.tokens.length !== n) throw new RangeError(`the rollout payload has ${out.tokens.length} token texts, expected ${n}`);
  for (const name of PER_TOKEN) out[name.replace(/_(\w)/g, (_, c) => c.toUpperCase())] = sizedArray(payload, name, n);
  return out;
}

/** A number with 4 significant digits ("0.01234", "1.5e-7"), signed where asked; "?" where unknown. */
export function sig(x, signed = false) {
  if (!Number.isFinite(x)) return "?";
  const body = Math.abs(x) !== 0 && (Math.abs(x) < 1e-4 || Math.abs(x) >= 1e5) ? x.toExponential(3) : x.toPrecision(4);
  const [mantissa, exponent] = body.split("e");
  // trailing zeros of the decimals only ("1000" stays, "0.5000" reads "0.5")
  const trimmed = mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa;
  const s = (exponent == null ? trimmed : `${trimmed}e${exponent}`).replace(/^-/, "\u2212");
  return signed && x > 0 ? `+${s}` : s;
}

/** The colour level in [0, 1] of token i: its |Δ| over the range. */
export function rollLevel(data, i, range) {
  const v = Math.abs(data.delta[i]);
  return Number.isFinite(v) ? Math.min(1, v / range) : NaN;
}

/** The header's items [name, value, key] from the stats (rollout_stats). */
export function rolloutItems(s) {
  const items = [
    ["rollout", `${s.label ?? "?"}`, "label"],
    ["mean |\u0394|", sig(s.mean_abs_delta), "mean_abs_delta"],
    ["max |\u0394|", sig(s.max_abs_delta), "max_abs_delta"],
    [`outside [1/${s.clip}, ${s.clip}]`, `${s.share_outside == null ? "?" : formatPercent(s.share_outside)} (${(s.outside || []).length} of ${s.tokens ?? "?"})`, "share_outside"],
    ["KL k3", sig(s.mean_k3), "mean_k3"],
  ];
  if (s.reward != null) items.push(["reward", sig(s.reward), "reward"]);
  return items;
}

export function rolloutCaption(s, [a, b]) {
  return `\u0394 = log \u03c0_b \u2212 log \u03c0_a per token, a = ${a}, b = ${b}; KL(a \u2016 b) by J. Schulman's k3; ` +
    `underlined: ratio outside [1/${s.clip}, ${s.clip}]${s.forking ? "; overlined: forking tokens (top 20 % by entropy)" : ""}`;
}

function row(name, value, key) {
  const tr = h("tr", "lvd-num");
  tr.dataset.key = key;
  tr.append(h("th", null, name), h("td", "lvd-num-value", value));
  return tr;
}

/** Fill `panel` for token i of the rollout (-1: the placeholder). */
export function showRolloutPanel(panel, data, i, labels, s) {
  panel.replaceChildren();
  panel.dataset.index = String(i);
  if (i < 0) {
    panel.appendChild(h("div", "lvd-placeholder", "Hover a token to see both sides' logprob, \u0394, the ratio and k1, k2, k3."));
    return;
  }
  const outside = (s.outside || []).includes(i);
  const forking = (s.forking || []).includes(i);
  const head = h("div", "lvd-panel-title");
  const notes = `${outside ? ` \u00b7 outside [1/${s.clip}, ${s.clip}]` : ""}${forking ? " \u00b7 forking token" : ""}`;
  head.append(h("span", null, `token ${i} `), h("code", "lvd-token-text", visible(data.tokens[i])), h("span", "lvd-title-numbers", notes));
  const table = h("table", "lvd-alts lvd-nums");
  const side = (name, lp, key) => row(name, `logprob ${formatLogprob(lp)} \u00b7 p ${Number.isFinite(lp) ? formatPercent(Math.exp(lp)) : "?"}`, key);
  table.append(
    side(labels[0] ?? "a", data.logprobA[i], "a"),
    side(labels[1] ?? "b", data.logprobB[i], "b"),
    row("\u0394 = log \u03c0_b \u2212 log \u03c0_a", sig(data.delta[i], true), "delta"),
    row("ratio \u03c0_b / \u03c0_a", sig(data.ratio[i]), "ratio"),
    row("k1 = \u2212\u0394", sig(data.k1[i], true), "k1"),
    row("k2 = \u0394\u00b2/2", sig(data.k2[i]), "k2"),
    row("k3 = (r \u2212 1) \u2212 \u0394", sig(data.k3[i]), "k3"),
  );
  panel.append(head, table);
}
