// The "decided at layer" colour mode: for a trace shown with its lens (LogprobView(lens.trace,
// lens=lens)), each token is coloured by the block from which it stays the model's top guess
// (lens.commitment(top=1), the `_decided` trait); -1, never decided before the output, has a
// colour of its own. Decided early is the bright end (as the other modes' confident end).

import { readArray } from "../toolkit/codec.js";

/** The "never" colour: Okabe–Ito vermillion, outside every palette's range. */
export const NEVER_RGB = [213, 94, 0];

export const DECIDED = {
  label: "decided at layer (lens)",
  range: [0, 1], // replaced by [0, last block] of the view's lens (decidedRange)
  confident: "low",
  value: (d, i) => (d.decided && i > 0 && i < d.decided.length ? d.decided[i] : NaN),
  format: (x) => String(Math.round(x)),
  never: { value: -1, rgb: NEVER_RGB, label: "never (not before the output)" },
  available: (model) => model.get("_decided") != null,
};

/** `data` with the lens's layers from the model (`data.decided`, an Int32Array or null). */
export function withDecided(data, model) {
  if (data) data.decided = readArray(model.get("_decided"), "decided");
  return data;
}

/** The default legend range of the decided mode: [0, the lens's last block]; null in other modes. */
export function decidedRange(model) {
  const blocks = Number(model.get("decided_blocks")) || 0;
  return model.get("color_mode") === "decided" && blocks > 1 ? [0, blocks - 1] : null;
}
