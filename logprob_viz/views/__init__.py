"""Views: what a person sees of a record, in a notebook or an offline page.

    codec.py         the one wire codec: arrays as self-describing binary buffers
    page.py          offline HTML pages and the notebook's HTML fallback
    logprob_view.py  `LogprobView`: a trace as a heatmap, the alternatives chart, appends
    compare_view.py  `CompareView` (compare_html.py its static copy)
    lens_view.py     `LensView`: layers x tokens
    plots.py         plotly figures; plot_link.py a figure linked to a view
    explorer/        `lv.explore()`: the app around one view
"""
