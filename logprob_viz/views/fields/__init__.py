"""The FieldsView (js/fields/): a JSON answer's fields over one LogprobView of its tokens.

    view.py   `FieldsView`, its panel and offline page
"""
