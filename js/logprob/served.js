// What the LogprobView says of a served trace's numbers (the `_served` trait, written by
// logprob_viz/views/logprob/served.py): lv.audit's verdict as a badge ("raw", "processed (T 0.7,
// top-p 0.9)", "3 tokens disagree") whose click pins the disagreeing tokens in turn, as the
// "least confident" button pins its tokens; what the numbers are ("as the model gave them", "as
// sampled from"); and "the provider returned no logprobs" where the trace has none (styles:
// served.css, imported by view.js, so this module stays importable in node). Every text
// here is set as text (h() / textContent), never parsed as HTML.

import { h } from "../toolkit/dom.js";

/** The badge's text at step `at` (-1: not stepped yet) of its `positions`. */
export function badgeText(badge, at) {
  const n = badge.positions.length;
  return at < 0 || n === 0 ? badge.label : `${badge.label} \u00b7 ${at + 1}/${n} \u25b8`;
}

/** The next step through `positions` after `at` (wrapping), -1 when there are none. */
export function nextStep(positions, at) {
  return positions.length ? (at + 1) % positions.length : -1;
}

/** The served line above the text (the badge, the numbers' label, the no-logprobs note), or null. */
export function buildServed(view) {
  const served = view.model.get("_served") ?? {};
  const { badge, numbers, no_logprobs: none } = served;
  if (!badge && !numbers && !none) return null;
  const line = h("div", "lv-served");
  if (none) line.appendChild(h("span", "lv-no-logprobs", none));
  if (none && view.jumpBtn) view.jumpBtn.hidden = true; // no logprob: no least-confident token to jump to
  if (badge) line.appendChild(badgeButton(view, badge));
  if (numbers) {
    const label = h("span", "lv-numbers", `logprobs ${numbers}`);
    label.title = `from ${served.numbers_from ?? "the server"}`;
    line.appendChild(label);
  }
  return line;
}

/** Put the served line in its place again (lv.audit judged the trace after the view was shown): the
 * rest of the view is not redrawn, and what is pinned stays pinned. */
export function redrawServed(view) {
  const line = buildServed(view);
  const old = view.root.querySelector(":scope > .lv-served");
  if (old && line) old.replaceWith(line);
  else if (old) old.remove();
  else if (line && view.legend?.parentNode === view.root) view.legend.before(line);
}

function badgeButton(view, badge) {
  const button = h("button", `lv-badge lv-badge-${badge.kind}`, badgeText(badge, -1));
  button.type = "button";
  const steps = badge.positions.length;
  button.title = `lv.audit: ${badge.explanation}` + (steps ? `\nclick: pin the ${steps} disagreeing tokens in turn` : "");
  let at = -1;
  button.addEventListener("click", () => {
    at = nextStep(badge.positions, at);
    if (at < 0) return;
    const i = badge.positions[at];
    button.textContent = badgeText(badge, at);
    view.reveal(i);
    view.setSelected(i);
  });
  return button;
}
