"""The explorer's look on one screen: its stylesheet and the keys behind "?".

The layout (see README, "The explorer"): the prompt, then one bar (Generate, Next token, Stop, a
two-line status, "more", "?"); below it the view, whose column beside the text holds the three
sampling sliders above the pinned token's chart, the text's column headed by the pinned token's
readout (js/logprob/explorer_side.js draws them; the rules below place them); the
tree and Compare below the view, shown once there is a branch; the pinned token's whole table and
bands last. Popovers ("more", "?") lie over the view and move nothing; every part that changes
its content keeps its height, so no click moves what a person is looking at.
"""

from __future__ import annotations

import html

__all__ = ["STYLE", "KEYS", "KEYS_TEXT", "FORK_LEGEND", "HELP_HTML"]

KEYS = (
    ("Ctrl+Enter", "in the prompt: Generate"),
    ("n", "Next token"),
    ("s, or Esc in the prompt", "Stop"),
    ("b", "branch at the pinned token (the alternative under the pointer, else the likeliest other)"),
    ("u", "undo the last change to the tree"),
    ("← →", "move the pin"),
    ("Esc", "release the pin"),
)
KEYS_TEXT = "Keys: " + " · ".join(f"{key} {what}" for key, what in KEYS)
FORK_LEGEND = (
    "▏ in the text: a fork (another branch takes another token there) · ↳ #n in the chart: that alternative's branch"
)
HELP_HTML = (
    "<div class='lv-explore-help'><b>Keys</b><table>"
    + "".join(f"<tr><td><kbd>{html.escape(key)}</kbd></td><td>{html.escape(what)}</td></tr>" for key, what in KEYS)
    + f"</table><div class='lv-tree-note'>{html.escape(FORK_LEGEND)}</div></div>"
)


# The three sliders head the chart's column (DESIGN.md: "the three sampling sliders in a compact row
# above the pinned token's chart"), not the text's: the text's column is ~280 px on a projector, where
# three sliders had 59 px each, about a pixel a step, and only the keyboard reached 0.70. The chart's
# column is wider (~356 px), and the text gains the row the sliders took. The view draws the sliders in
# its controls (js/logprob/explorer_side.js); here the controls' box gives way (display: contents) so
# the sliders take the chart column's head and the readout the text column's, each sticky, the chart
# column's own content starting below the sliders' fixed height. Each slider's track is at least 1.4 px
# a step past its 16 px thumb (temperature 40 steps of 0.05, top-p 19, min-p 100 of 0.01: at about a
# pixel a step some steps fall between two pixels); temperature and min-p take twice top-p's share of
# the rest; each value sits beside its name.
# A sticky column stays only while its view's box holds it: the text spans one more row than the column,
# --lv-stay high, so however short the text the column stays whole (the sliders never over the chart)
# while the notebook scrolls that far; under a long text that row is the text's own. Each part of the
# text's column has its row (the served line's is empty for the model's own traces), so a server's
# trace, whose served line adds a part, never puts the text below the column.
_SLIDERS_BESIDE_THE_CHART = """
.lv-explore .lv-root.lv-has-side { --lv-sliders-h: calc(1.4 * var(--lv-small-size) + 22px); }
.lv-explore .lv-root.lv-has-side .lv-side-controls { display: contents; }
.lv-explore .lv-root.lv-has-side .lv-side-readout { grid-column: 1; grid-row: 1; position: sticky; top: 0; z-index: 1;
  background: var(--lv-bg); height: calc(3 * 1.35em + 6px); padding-bottom: 6px; }
.lv-explore .lv-root.lv-has-side .lv-side-sliders { grid-column: 2; grid-row: 1; align-self: start;
  position: sticky; top: 0; z-index: 2; height: var(--lv-sliders-h); gap: 10px; background: var(--lv-bg); }
.lv-explore .lv-root.lv-has-side .lv-side { padding-top: var(--lv-sliders-h); }
.lv-explore .lv-root.lv-has-side { --lv-stay: min(25vh, 160px);
  grid-template-rows: auto auto auto auto auto 1fr var(--lv-stay); }
.lv-explore .lv-root.lv-has-side .lv-side { grid-row: 1 / 7; }
.lv-explore .lv-root.lv-has-side > .lv-top { grid-row: 2; }
.lv-explore .lv-root.lv-has-side > .lv-served { grid-row: 3; }
.lv-explore .lv-root.lv-has-side > .lv-legend { grid-row: 4; }
.lv-explore .lv-root.lv-has-side > .lv-strip { grid-row: 5; }
.lv-explore .lv-root.lv-has-side .lv-text { grid-row: 6 / span 2; }
.lv-explore .lv-side-slider { --lv-steps: 40; display: flex; flex-wrap: wrap; align-content: flex-start;
  flex: 2 1 0; }
.lv-explore .lv-side-slider:has([data-setting="top_p"]) { --lv-steps: 19; flex-grow: 1; }
.lv-explore .lv-side-slider:has([data-setting="min_p"]) { --lv-steps: 100; }
.lv-explore .lv-side-slider-head { display: flex; width: 100%; column-gap: 6px; }
.lv-explore .lv-side-range { flex: 1 1 100%; min-width: calc(var(--lv-steps) * 1.4px + 16px); }
"""

# JupyterLab's output area clips (overflow auto / hidden), which would hold the view's sticky column
# and sliders (explorer.css) to the output instead of the notebook's scroller: not around an explorer.
STYLE = """<style>
.jp-OutputArea:has(.lv-explore), .jp-OutputArea-child:has(.lv-explore),
.jp-OutputArea-output:has(.lv-explore) { overflow: visible; }
.lv-explore.widget-box, .lv-explore .lv-explore-head { overflow: visible !important; }
.lv-explore .lv-explore-head { position: relative; z-index: 5; }
.lv-explore .lv-explore-bar { gap: 4px; flex-wrap: nowrap; overflow: visible; }
.lv-explore .lv-explore-bar .jupyter-button, .lv-explore .lv-explore-bar .widget-toggle-button { margin: 0; }
.lv-explore .lv-explore-statusbox { flex: 1 1 0; min-width: 0; height: 2.8em; overflow: hidden; margin: 0 6px;
  align-self: center; }
.lv-explore .lv-explore-statusbox .widget-html-content { height: auto; line-height: 1.4em; white-space: normal; }
.lv-explore .lv-explore-status { font-size: 13px; line-height: 1.4em; max-height: 2.8em; overflow-y: auto;
  overflow-wrap: anywhere; }
.lv-explore .lv-explore-pop { position: absolute; top: 100%; right: 0; z-index: 30; width: min(680px, 100%);
  flex-wrap: wrap; gap: 4px; padding: 8px 10px; background: var(--jp-layout-color1, #fff);
  color: var(--jp-ui-font-color1, #222); border: 1px solid var(--jp-border-color1, #bbb); border-radius: 6px;
  box-shadow: 0 4px 16px rgba(0, 0, 0, 0.3); box-sizing: border-box; }
.lv-explore .lv-explore-pop .widget-html-content { height: auto; line-height: 1.4; white-space: normal; }
.lv-explore .lv-explore-help table { border-collapse: collapse; margin: 4px 0; }
.lv-explore .lv-explore-help td { padding: 1px 10px 1px 0; vertical-align: top; }
.lv-explore .lv-explore-help kbd { font-family: var(--jp-code-font-family, monospace); white-space: nowrap; }
.lv-explore .lv-explore-pop .lv-pop-title { font-weight: 600; margin: 6px 0 2px; }
.lv-explore .lv-tree-outline { border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; }
.lv-explore .lv-tree-outline .lv-tree-row { justify-content: flex-start; text-align: left; height: auto;
  min-height: 24px; padding: 1px 6px; background: transparent; box-shadow: none; white-space: pre-wrap;
  overflow-wrap: anywhere; font-family: var(--jp-code-font-family, monospace); font-size: 13px; }
.lv-explore .lv-tree-outline .lv-tree-row:hover { background: var(--jp-layout-color2, #eee); }
.lv-explore .lv-tree-outline .lv-tree-row.lv-tree-current { font-weight: bold;
  background: color-mix(in srgb, var(--jp-brand-color1, #1976d2) 28%, transparent); }
.lv-explore .lv-tree-note { color: var(--jp-ui-font-color2, #666); font-size: 12px; line-height: 1.4; }
.lv-explore .lv-explore-prefix { overflow-wrap: anywhere; }
.lv-explore .lv-tree-title { flex: 1 1 auto; min-width: 0; padding: 0 0.5em; }
.lv-explore .lv-explore-tools { margin-top: 6px; }
.lv-explore .lv-tree-panel, .lv-explore .lv-compare-anchor { overflow: visible !important; }
.lv-explore .lv-compare-anchor { position: relative; height: 0; z-index: 20; }
.lv-explore .lv-compare-anchor > .lv-explore-compare { position: absolute; top: 0; left: 0; right: 0;
  max-height: min(70vh, 640px); overflow: auto; box-sizing: border-box; padding: 4px 6px;
  background: var(--jp-layout-color1, #fff); border: 1px solid var(--jp-border-color1, #bbb); border-radius: 6px;
  box-shadow: 0 4px 16px rgba(0, 0, 0, 0.3); }
.lv-explore .lv-explore-compare > * { flex-shrink: 0; }
""" + _SLIDERS_BESIDE_THE_CHART + "</style>"
