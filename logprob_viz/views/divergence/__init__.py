"""The divergence view (issue 44): one text of `lv.divergence`, coloured by per-token KL or |Δp|.

    payload.py    what crosses to the frontend: per-token numbers, each hovered token's alternatives
                  of both sides in one token order, the header's statistics
    rollout.py    `RolloutView`: one rollout of a `Rollouts` coloured by |Δ| per token (the same frontend)
    view.py       `DivergenceView` (the widget, js/divergence/) and its static page (``to_html``)
    widget.py     `DivergenceWidget`: the bundle's one class, the traits both views sync
"""
