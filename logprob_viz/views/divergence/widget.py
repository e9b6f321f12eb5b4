"""`DivergenceWidget`: the one class of the ``divergence`` bundle (js/divergence/), with the traits both
of its views sync: `DivergenceView` (one text of `lv.divergence`) and `RolloutView` (one RL rollout,
payload kind ``"rollout"``). It shows nothing by itself: make one of the two."""

from __future__ import annotations

import traitlets as t

from ..bundled import Bundled, checked_size

__all__ = ["DivergenceWidget"]


class DivergenceWidget(Bundled, bundle="divergence"):
    """The traits js/divergence/ reads: ``_payload`` (its ``kind`` says which view), ``stats`` (the
    header), ``labels`` (the two sides' names), ``selected`` (-1: none) and ``size``."""

    _payload = t.Dict().tag(sync=True)
    stats = t.Dict().tag(sync=True)
    labels = t.List(t.Unicode()).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    size = t.Unicode("normal").tag(sync=True)

    _check_size = t.validate("size")(checked_size)
