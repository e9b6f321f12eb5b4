// A view's saved state outside Jupyter: the offline page and a notebook output's text/html fallback
// (logprob_viz/views/page.py). Each view's box holds
//
//   <div class="BOX">
//     <div class="BOX-host">…text fallback…</div>
//     <script type="application/vnd.logprob-viz.state+base64">BASE64</script>
//     <script>…the view's standalone bundle…</script>
//   </div>
//
// BASE64 is the UTF-8 JSON {state, buffer_paths, buffers: [base64…]}: the widget's `get_state()`
// split by the wire codec's `split_buffers` (logprob_viz/views/codec.py). Data is never parsed as
// HTML: it is base64 in a non-executed script element, decoded with atob + TextDecoder + JSON.parse.

import { makeModel, setPath } from "./model.js";

export const STATE_TYPE = "application/vnd.logprob-viz.state+base64";

/** Bytes of a base64 string. */
export function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** The widget state from its base64 JSON, with each buffer put back at its path as a DataView. */
export function decodeState(b64) {
  const meta = JSON.parse(new TextDecoder("utf-8").decode(fromBase64(b64.trim())));
  const state = meta.state;
  (meta.buffer_paths || []).forEach((path, i) => {
    const bytes = fromBase64(meta.buffers[i]);
    setPath(state, path, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
  return state;
}

/** Render `widget` (an anywidget module) into one box of class `box` (once), over the minimal model. */
export async function mount(el, widget, box, what) {
  if (!el || el.hasAttribute("data-lv-mounted")) return;
  el.setAttribute("data-lv-mounted", "");
  const host = el.querySelector(`.${box}-host`);
  const data = el.querySelector(`script[type="${STATE_TYPE}"]`);
  if (!host || !data) return;
  try {
    const model = makeModel(decodeState(data.textContent));
    if (widget.initialize) await widget.initialize({ model });
    const view = document.createElement("div");
    await widget.render({ model, el: view });
    host.replaceChildren(view);
  } catch (err) {
    const msg = document.createElement("pre");
    msg.textContent = `logprob_viz: could not show the ${what}: ${err && err.message ? err.message : err}`;
    host.appendChild(msg);
    throw err;
  }
}

/** Mount the box `script` sits in; without a current script (a module import), every box not mounted yet. */
export function mountAll(script, widget, box, what) {
  const own = script && script.closest ? script.closest(`.${box}`) : null;
  if (own) return void mount(own, widget, box, what);
  for (const el of document.querySelectorAll(`.${box}:not([data-lv-mounted])`)) mount(el, widget, box, what);
}
