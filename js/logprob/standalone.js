// The LogprobView outside Jupyter: a standalone, offline page (logprob_viz.views.page.to_html) and
// the text/html fallback of a notebook output (shown where no widget manager renders: a notebook
// opened without a kernel, nbconvert's HTML, notebook viewers). Bundled by esbuild as a classic
// script (IIFE, no imports at run time, nothing fetched); the saved state's layout and decoding are
// in ../toolkit/saved_state.js, the minimal model object in ../toolkit/model.js. The view inserts
// token text as text, as in the notebook.

import { mountAll } from "../toolkit/saved_state.js";
import widget from "./view.js";


mountAll(document.currentScript, widget, "lv-standalone", "view");
