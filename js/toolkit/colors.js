// Colours every view shares: the perceptually uniform, colour-blind-safe palettes (dark to
// bright), sampled linearly; the text-on-colour rule; CSS strings of both. Pure: tested in node.

/** Perceptually uniform palettes, safe for the common colour-vision deficiencies, dark to bright. */
export const PALETTES = {
  viridis: [
    [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
    [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
  ],
  cividis: [[0, 34, 78], [64, 77, 107], [124, 123, 120], [188, 175, 111], [254, 232, 56]],
  magma: [[0, 0, 4], [81, 18, 124], [183, 55, 121], [252, 137, 97], [252, 253, 191]],
};

/** The colour at t in [0, 1] (clamped) of a list of [r, g, b] stops, interpolated linearly. */
export function interpolate(stops, t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, stops.length - 1);
  const f = x - lo;
  return stops[lo].map((c, ch) => Math.round(c + (stops[hi][ch] - c) * f));
}

/** The palette's colour at t in [0, 1] as [r, g, b] (an unknown palette name: viridis). */
export function paletteColor(palette, t) {
  return interpolate(PALETTES[palette] ?? PALETTES.viridis, t);
}

/** WCAG relative luminance of an [r, g, b] colour (0 black, 1 white). */
export function luminance([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** Black or white, whichever contrasts more with the background (WCAG relative luminance). */
export function readableOn(c) {
  const lum = luminance(c);
  return (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) ? "#000" : "#fff";
}

/** [r, g, b, alpha] of a computed CSS colour ("rgb(1, 2, 3)", "rgba(1, 2, 3, 0.5)"); null otherwise. */
export function parseRgb(css) {
  const m = /^rgba?\(([^)]+)\)$/.exec(String(css).trim());
  if (!m) return null;
  const parts = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
  if (parts.length < 3 || parts.slice(0, 3).some((x) => !Number.isFinite(x))) return null;
  return [parts[0], parts[1], parts[2], parts.length > 3 && Number.isFinite(parts[3]) ? parts[3] : 1];
}

/** Whether a computed background colour is dark (nearer black than white); null: no colour (transparent). */
export function isDarkColor(css) {
  const c = parseRgb(css);
  if (!c || c[3] === 0) return null;
  return luminance(c) < 0.18; // (mid grey's luminance: JupyterLab Dark's #111 well under, Light's #fff over)
}

/** "rgb(r,g,b)" of an [r, g, b] colour. */
export const rgb = (c) => `rgb(${c.join(",")})`;

/** Background and readable text colour of an [r, g, b] colour; null stays null (unknown). */
export const styleOn = (c) => (c ? { background: rgb(c), color: readableOn(c) } : null);

/** A left-to-right CSS gradient of `colorAt(t)` for t from 0 to 1, in `steps` steps. */
export function gradientOf(colorAt, steps = 10) {
  const stops = [];
  for (let s = 0; s <= steps; s++) stops.push(`${rgb(colorAt(s / steps))} ${((s / steps) * 100).toFixed(1)}%`);
  return `linear-gradient(to right, ${stops.join(", ")})`;
}
