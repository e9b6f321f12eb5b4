"""The ChoicesView (js/choices/): a multiple choice's bars over one LogprobView of the option picked.

    view.py   `ChoicesView` and its payload (`encode_choices`)
"""
