// The corpus view's table outside Jupyter: the offline page (corpus.to_html) and a notebook
// output's text/html fallback. A classic script (IIFE): it reads the table's state from the
// base64 JSON in its box's <script type="application/vnd.logprob-viz.state+base64"> (never run,
// never parsed as HTML; see logprob_viz/views/page.py) and renders the view over the toolkit's
// minimal model. No kernel here: selecting another row says that its trace needs one.

import { makeModel, setPath } from "../toolkit/model.js";
import widget from "./view.js";

const STATE_TYPE = "application/vnd.logprob-viz.state+base64";

function fromBase64(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function decodeState(b64) {
  const meta = JSON.parse(new TextDecoder("utf-8").decode(fromBase64(b64.trim())));
  (meta.buffer_paths || []).forEach((path, i) => {
    const bytes = fromBase64(meta.buffers[i]);
    setPath(meta.state, path, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
  return meta.state;
}

function mount(box) {
  if (!box || box.hasAttribute("data-lvx-mounted")) return;
  box.setAttribute("data-lvx-mounted", "");
  const host = box.querySelector(".lvx-standalone-host");
  const data = box.querySelector(`script[type="${STATE_TYPE}"]`);
  if (!host || !data) return;
  try {
    const el = document.createElement("div");
    widget.render({ model: makeModel(decodeState(data.textContent)), el });
    host.replaceChildren(el);
  } catch (err) {
    const msg = document.createElement("pre");
    msg.textContent = `logprob_viz: could not show the corpus view: ${err && err.message ? err.message : err}`;
    host.appendChild(msg);
    throw err;
  }
}

const own = document.currentScript && document.currentScript.closest(".lvx-standalone");
if (own) mount(own);
else for (const box of document.querySelectorAll(".lvx-standalone:not([data-lvx-mounted])")) mount(box);
