// How wide a text is in the page's fonts, for views that size a column to its longest name (the
// lens grid's columns, the surprise index's group column) so that no token is ever cut.

import { h } from "./dom.js";

/** The font family that an element of `className` gets inside `container` (a probe made, read, removed). */
export function fontFamilyOf(container, className) {
  const probe = h("div", className, "x");
  container.append(probe);
  const family = getComputedStyle(probe).fontFamily;
  probe.remove();
  return family;
}

/**
 * measure(text, px) in CSS px for `family`, drawn bold (never narrower than regular), or null where
 * the page has no canvas (the caller keeps its estimate).
 */
export function textMeasure(family) {
  const context = typeof document === "undefined" ? null : document.createElement("canvas").getContext("2d");
  if (!context) return null;
  return (text, px) => {
    context.font = `bold ${px}px ${family}`;
    return context.measureText(text).width;
  };
}
