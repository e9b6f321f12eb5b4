"""The LogprobView (js/logprob/): one trace as a heatmap, the alternatives chart, appends.

    view.py          `LogprobView`, its payload (`encode_trace` of codec.py) and its bundle
    attribution.py   its "why?" requests (js/logprob/why.js): the kernel runs `runner.attribute`
                     and keeps each answer in the view's ``attributions`` trait
    served.py        what it says of a served trace's numbers (``_served``): `lv.audit`'s badge, "as
                     the model gave them" / "as sampled from", "the provider returned no logprobs"
"""
