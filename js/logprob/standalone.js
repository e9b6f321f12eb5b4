// The LogprobView outside Jupyter: a standalone, offline page (logprob_viz.views.page.to_html) and
// the text/html fallback of a notebook output (shown where no widget manager renders: a notebook
// opened without a kernel, nbconvert's HTML, notebook viewers).
//
// Bundled by esbuild as a classic script (IIFE, no imports at run time, nothing fetched). The
// page holds, for each view:
//
//   <div class="lv-standalone">
//     <div class="lv-standalone-host">…text fallback…</div>
//     <script type="application/vnd.logprob-viz.state+base64">BASE64</script>
//     <script>…this bundle…</script>
//   </div>
//
// BASE64 is the UTF-8 JSON {state, buffer_paths, buffers: [base64…]}: the widget's
// `get_state()` split by the wire codec's `split_buffers` (logprob_viz/views/codec.py). Data is never
// parsed as HTML: it is base64 in a non-executed script element, decoded with atob + TextDecoder +
// JSON.parse; the view inserts token text as text, as in the notebook.
//
// The model object is the minimal one anywidget's render() needs (get/set/on/off/save_changes/send
// over a plain object, change events fired synchronously on set): js/toolkit/model.js, shared with the
// frontend benchmark's harness.

import { makeModel, setPath } from "../toolkit/model.js";
import widget from "./view.js";

const STATE_TYPE = "application/vnd.logprob-viz.state+base64";

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

/** Render the view of one `.lv-standalone` box (once). */
export async function mount(box) {
  if (!box || box.hasAttribute("data-lv-mounted")) return;
  box.setAttribute("data-lv-mounted", "");
  const host = box.querySelector(".lv-standalone-host");
  const data = box.querySelector(`script[type="${STATE_TYPE}"]`);
  if (!host || !data) return;
  try {
    const model = makeModel(decodeState(data.textContent));
    if (widget.initialize) await widget.initialize({ model });
    const el = document.createElement("div");
    await widget.render({ model, el });
    host.replaceChildren(el);
  } catch (err) {
    const msg = document.createElement("pre");
    msg.textContent = `logprob_viz: could not show the view: ${err && err.message ? err.message : err}`;
    host.appendChild(msg);
    throw err;
  }
}

/** Mount the box this script sits in; without a current script (a module import), every box not mounted yet. */
export function mountAll(script) {
  const own = script && script.closest ? script.closest(".lv-standalone") : null;
  if (own) return void mount(own);
  for (const box of document.querySelectorAll(".lv-standalone:not([data-lv-mounted])")) mount(box);
}

mountAll(document.currentScript);
