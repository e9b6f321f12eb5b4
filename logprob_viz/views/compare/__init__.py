"""The CompareView (js/compare/): two or more traces of one text, token by token.

    view.py   `CompareView` and its payload (`encode_comparison`)
"""
