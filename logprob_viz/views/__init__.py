"""Views: what a person sees of a record, in a notebook or an offline page.

    codec.py          the one wire codec: arrays as self-describing binary buffers
    shows.py          which view draws which record (`trace.view()`, `.plot()`, `.to_html()` look it up)
    page.py           offline HTML pages and the notebook's HTML fallback; static_html.py for script-less copies
    toolkit.py        palettes, text colour, percent format, token display (the JS twin: js/toolkit/)
    whitespace.py     the one visible-whitespace mapping (the JS twin: js/toolkit/whitespace.js)
    logprob_view.py   `LogprobView`: a trace as a heatmap, the alternatives chart, appends;
                      attribution_view.py its "why?" requests
    compare_view.py   `CompareView`;  lens_view.py `LensView`;  corpus_view.py `CorpusView` (+ corpus_payload.py)
    guess.py          `lv.guess`, the guessing game (+ guess_scoring.py, guess_chart.py)
    pictures.py, export_svg.py   SVG and LaTeX pictures, no browser
    plots.py          plotly figures; plot_link.py a figure linked to a view
    explorer/         `lv.explore()`: the app around one view
"""
