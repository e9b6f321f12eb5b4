"""The LensView (js/lens/): what each layer would predict (the logit lens).

    view.py   `LensView`, its payload (`encode_lens`) and the kernel's detail answers
"""
