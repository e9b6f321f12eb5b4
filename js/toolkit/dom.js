// Building DOM elements: the one helper every view uses. Text goes in with textContent, never
// parsed as HTML: token text from a model is data (a token can be `<script>`).

/** Create an element with a class (and, optionally, plain text). Never parses HTML. */
export function h(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text != null) el.textContent = text;
  return el;
}

/** A <select> of `options` ([value, label] pairs) showing `value`; `onChange(value)` on a pick. */
export function select(options, value, className, onChange) {
  const el = h("select", className);
  for (const [v, label] of options) {
    const opt = h("option", null, label);
    opt.value = String(v);
    el.appendChild(opt);
  }
  el.value = String(value);
  el.addEventListener("change", () => onChange(el.value));
  return el;
}
