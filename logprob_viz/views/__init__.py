"""Views: what a person sees of a record, in a notebook or an offline page.

    codec.py         the one wire codec: arrays as self-describing binary buffers
    page.py          the frontend files, the one page template, the notebook's HTML fallback, lv.to_html
    static_html.py   a comparison's and a lens's static HTML (no script)
    whitespace.py    the one visible-whitespace mapping (as js/toolkit/whitespace.js)
    logprob_view.py  `LogprobView`: a trace as a heatmap, the alternatives chart, appends
    compare_view.py  `CompareView`: traces aligned by bytes
    lens_view.py     `LensView`: layers x tokens
    plots.py         plotly figures; plot_link.py a figure linked to a view
    explorer/        `lv.explore()`: the app around one view
"""
