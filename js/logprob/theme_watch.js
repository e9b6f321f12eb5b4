// Which background the view is drawn on (light or dark), and when that changes: JupyterLab's theme
// switch, VS Code's, an OS preference. The palettes' unconfident end must stand out from it
// (modes.js), so a change of background recolours the tokens, the legend and the strip.
//
// A theme switch shows as attributes of <html> or <body> changing (JupyterLab's data-jp-theme-*,
// VS Code's classes) or as the OS's colour-scheme preference changing; its stylesheet may apply a
// little later, so the background is looked at again a few times after (a cheap style read each).

import { isDarkColor } from "../toolkit/colors.js";

const LOOK_AGAIN_MS = [0, 100, 400, 1200, 3000]; // after a sign of a theme switch

/** Whether `el` is drawn on a dark background: its own, or the first ancestor's that has one. */
export function onDark(el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const dark = isDarkColor(getComputedStyle(node).backgroundColor);
    if (dark != null) return dark;
  }
  return false; // no background anywhere: the page's default, white
}

/**
 * Call `changed(dark)` whenever the background under `root` turns dark or light. Returns
 * { check, stop }: `check()` looks again now (e.g. a view shown again after its tab was hidden),
 * `stop()` detaches.
 */
export function watchTheme(root, dark, changed) {
  let now = dark;
  let timers = [];
  const check = () => {
    if (!root.isConnected) return;
    const next = onDark(root);
    if (next !== now) changed((now = next));
  };
  const soon = () => {
    for (const t of timers) clearTimeout(t);
    timers = LOOK_AGAIN_MS.map((ms) => setTimeout(check, ms));
  };
  const observer = typeof MutationObserver === "function" ? new MutationObserver(soon) : null;
  if (observer) {
    observer.observe(document.documentElement, { attributes: true });
    if (document.body) observer.observe(document.body, { attributes: true });
  }
  const scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  scheme?.addEventListener?.("change", soon);
  return {
    check,
    stop: () => {
      for (const t of timers) clearTimeout(t);
      observer?.disconnect();
      scheme?.removeEventListener?.("change", soon);
    },
  };
}
