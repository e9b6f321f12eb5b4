// Which background the view is drawn on (light or dark), and when that changes: JupyterLab's theme
// switch, VS Code's, an OS preference. The palettes' unconfident end must stand out from it
// (modes.js), so a change of background recolours the tokens, the legend and the strip.
//
// The change is seen as the root's own background colour changing: the root carries a 1 ms
// transition of `background-color` (widget.css), whose `transitionend` says that the computed
// colour changed, whatever changed it (a theme's stylesheet, a class on <body>, a variable).

import { isDarkColor } from "../toolkit/colors.js";

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
 * { check, stop }: `check()` looks again (a view shown again after its tab was hidden, where no
 * transition runs), `stop()` detaches.
 */
export function watchTheme(root, dark, changed) {
  let now = dark;
  const check = () => {
    const next = onDark(root);
    if (next !== now) changed((now = next));
  };
  const onEnd = (e) => e.target === root && e.propertyName === "background-color" && check();
  root.addEventListener("transitionend", onEnd);
  return { check, stop: () => root.removeEventListener("transitionend", onEnd) };
}
