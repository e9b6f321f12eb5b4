"""Views: what a person sees of a record, in a notebook or an offline page.

    bundled.py        the one widget base: each bundle declared once (`BUNDLES`), its check, the
                      notebook's HTML fallback (`HtmlFallback`: the one ``_repr_mimebundle_``)
    codec.py          the one wire codec: arrays as self-describing binary buffers
    shows.py          which view draws which record (`trace.view()`, `.plot()`, `.to_html()` look it up)
    page.py           offline HTML pages and the notebook's HTML fallback; static_html.py for script-less copies
    toolkit.py        palettes, text colour, percent format, token display (the JS twin: js/toolkit/)
    whitespace.py     the one visible-whitespace mapping (the JS twin: js/toolkit/whitespace.js)
    One folder per view, as in js/: its view.py beside what encodes its payload
    logprob/          `LogprobView`: a trace as a heatmap, the alternatives chart, appends;
                      attribution.py its "why?" requests
    compare/          `CompareView`;  lens/ `LensView`;  fields/ `FieldsView`;  choices/ `ChoicesView`
    corpus/           `CorpusView` (+ payload.py, string_ranks.py its sorts)
    divergence/       `DivergenceView`: one text of `lv.divergence` by per-token KL (+ payload.py);
                      `RolloutView`: one RL rollout by per-token |Δ| (rollout.py, the same frontend)
    guess/            `lv.guess`, the guessing game (game.py + scoring.py, chart.py)
    panel_over_trace.py   the one layout of corpus/, fields/, choices/: a panel over ONE LogprobView
    defaults.py       `lv.settings`: what every view made from now on starts with (size)
    pictures.py, export_svg.py   SVG and LaTeX pictures, no browser
    plots.py          plotly figures; plot_link.py a figure linked to a view; calibration_plot.py the
                      reliability diagram
    explorer/         `lv.explore()`: the app around one view
"""
