// The corpus view's table outside Jupyter: the offline page (corpus.to_html) and a notebook
// output's text/html fallback. A classic script (IIFE): it reads the table's state from the
// base64 JSON in its box's <script type="application/vnd.logprob-viz.state+base64"> (never run,
// never parsed as HTML; see logprob_viz/views/page.py) and renders the view over the toolkit's
// minimal model. No kernel here: selecting another row says that its trace needs one.

import { mountAll } from "../toolkit/saved_state.js";
import widget from "./view.js";

mountAll(document.currentScript, widget, "lvx-standalone", "corpus view");
