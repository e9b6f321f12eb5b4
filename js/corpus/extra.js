// Per-item figures a corpus names as table columns (payload.extra: a corpus of divergences or
// rollouts shows mean KLD, max KLD, flips, |Δ|, reward): numbers that sort like the table's own.
// A corpus without them (the usual one) reads and shows nothing of this.

import { readArray } from "../toolkit/codec.js";
import { formatStat } from "../toolkit/format.js";

/** [name, title, "float"] of the payload's extra columns (empty without). */
export function extraColumns(payload) {
  const spec = payload && payload.extra && payload.extra.columns;
  return Array.isArray(spec) ? spec.map(([name, title]) => [name, title, "float"]) : [];
}

/** Add the payload's extra columns' values to `columns` (each NaN where unknown); their [name, title, kind]. */
export function readExtra(payload, columns, n) {
  const spec = extraColumns(payload);
  for (const [name] of spec) {
    const values = readArray(payload.extra[name], `extra.${name}`);
    if (values.length !== n) throw new RangeError(`corpus payload extra.${name} has ${values.length} values, expected ${n}`);
    columns[name] = values;
  }
  return spec;
}

/** A figure's cell: whole numbers as they are (flips), others with 4 significant digits; "" when unknown. */
export function extraText(v) {
  if (!Number.isFinite(v)) return "";
  if (Number.isInteger(v) && Math.abs(v) < 1e6) return String(v);
  const digits = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 1 ? 3 : 4;
  return Math.abs(v) > 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : formatStat(v, digits);
}
