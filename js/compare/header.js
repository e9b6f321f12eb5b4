// The compare view's header: per row its numbers, each with what it is computed over. The
// aligned part (the same bytes for every row) and, where the texts differ, each row's own
// continuation (the bytes after the part every row shares). Numbers come from the kernel
// (CompareView.numbers, Comparison.scored); where one cannot be computed, the header says why
// instead of showing "?".

import { h } from "../toolkit/dom.js";
import { formatFixed } from "../toolkit/format.js";

/** "12 tokens, 43 bytes" (and the tokens left out) for one row's part; its reason when nothing counts. */
export function overText(part) {
  if (!part) return "";
  if (part.reason) return "nothing to compare";
  // tokens of the part that are not counted: without a logprob (own continuation, text)
  const skipped = part.skipped && part.over !== "aligned" ? ` (+${part.skipped} without a logprob)` : "";
  return `${part.tokens} tokens${skipped}, ${part.bytes} bytes`;
}

const number = (x, digits) => (x == null || !Number.isFinite(x) ? "\u2013" : formatFixed(x, digits));

function partCells(part, cls) {
  const bpb = h("td", `lvc-bpb ${cls}`, number(part?.bits_per_byte, 4));
  const ppl = h("td", `lvc-ppl ${cls}`, number(part?.perplexity, 2));
  const over = h("td", `lvc-over ${cls}`, overText(part));
  if (part?.reason) [bpb, ppl, over].forEach((el) => (el.title = part.reason));
  if (part && !part.reason) {
    bpb.dataset.value = String(part.bits_per_byte);
    ppl.dataset.value = String(part.perplexity);
  }
  return [bpb, ppl, over];
}

function headRows(sameText, shared) {
  const rows = [];
  if (!sameText) {
    const top = h("tr", "lvc-header-groups");
    top.append(h("th", null, ""), h("th", null, ""));
    const aligned = h("th", "lvc-group", "aligned part (the same bytes in every row)");
    const own = h("th", "lvc-group", `own continuation (each row's bytes after the first ${shared})`);
    aligned.colSpan = 3;
    own.colSpan = 3;
    top.append(own, aligned, h("th", null, "")); // what differs first: on a narrow screen it stays in sight
    rows.push(top);
  }
  const head = h("tr");
  const part = ["bits / byte", "perplexity", "over"];
  ["", "label", ...part, ...(sameText ? [] : part), "tokens"].forEach((t) => head.appendChild(h("th", null, t)));
  rows.push(head);
  return rows;
}

/** Words under the table: what the aligned numbers are over, or why nothing aligned can be compared. */
function caption(model, nSpans, aligned) {
  const shared = model.get("shared_bytes");
  const sameText = model.get("same_text");
  const reason = aligned.find((p) => p?.reason)?.reason;
  const count = `${nSpans} aligned span${nSpans === 1 ? "" : "s"}`;
  const spans = sameText
    ? `${count} over the same ${shared} bytes`
    : `texts differ: ${count} over the first ${shared} bytes, then each row's own continuation`;
  if (reason) return [`${spans}.`, reason.charAt(0).toUpperCase() + reason.slice(1)];
  const known = aligned[0]?.bytes ?? 0;
  const over = `aligned: bits per byte over the ${known} bytes every row has a logprob for` +
    (known < shared ? ` (a text's first token has none)` : "") + "; perplexity over each row's tokens there";
  return [`${spans}.`, over];
}

/** `{table, caption}`: the header of the compare view of `model` (its traits) with `nSpans` spans. */
export function buildHeader(model, nSpans, labels) {
  const numbers = model.get("numbers") || {};
  const sameText = model.get("same_text");
  const aligned = numbers.aligned || [];
  const own = numbers.own || [];
  const counts = model.get("n_tokens") || [];
  const table = h("table", "lvc-header");
  headRows(sameText, model.get("shared_bytes")).forEach((tr) => table.appendChild(tr));
  labels.forEach((label, r) => {
    const tr = h("tr", "lvc-header-row");
    tr.dataset.row = String(r);
    tr.append(h("td", "lvc-row-no", String(r)), h("td", "lvc-label", label));
    if (!sameText) tr.append(...partCells(own[r], "lvc-own"));
    tr.append(...partCells(aligned[r], "lvc-aligned"));
    tr.append(h("td", "lvc-ntok", String(counts[r] ?? "?")));
    table.appendChild(tr);
  });
  const words = h("div", "lvc-caption");
  caption(model, nSpans, aligned).forEach((line) => words.appendChild(h("div", null, line)));
  return { table, caption: words };
}
