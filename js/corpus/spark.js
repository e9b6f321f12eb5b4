// The surprisal sparkline of a row: a small canvas, one bar per point (a token, or for a long
// trace the largest surprisal of a bin of tokens), on the corpus's common scale, so rows compare.
// Unknown points (NaN: the first prompt token) are gaps.

export const SPARK_WIDTH = 72;
export const SPARK_HEIGHT = 16;

/** Draw `values[start, end)` into `canvas` scaled to `max`, in `color`. */
export function drawSpark(canvas, values, start, end, max, color) {
  const ratio = (typeof window !== "undefined" && window.devicePixelRatio) || 1;
  const w = SPARK_WIDTH;
  const hgt = SPARK_HEIGHT;
  if (canvas.width !== w * ratio) {
    canvas.width = w * ratio;
    canvas.height = hgt * ratio;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${hgt}px`;
  }
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, w, hgt);
  const n = end - start;
  if (n <= 0) return;
  const step = w / n;
  ctx.fillStyle = color;
  for (let i = 0; i < n; i++) {
    const v = values[start + i];
    if (Number.isNaN(v)) continue;
    const bar = Math.max(1, (Math.min(v, max) / max) * hgt);
    ctx.fillRect(i * step, hgt - bar, Math.max(1, step - (step > 2 ? 0.5 : 0)), bar);
  }
}
