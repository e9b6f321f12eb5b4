"""`DivergenceView`: one text of `lv.divergence`, each token coloured by its KL(base ‖ candidate) or
|Δp|, the tokens where the two top tokens differ (flips) marked. Hovering a token shows both sides'
alternatives in one token order, one column each, with Δp; "next flip" walks the flips. Where a side
gave only its top-K, a token's KL is a range and shows as one, never as a single number. The
frontend is ``js/divergence/``; the payload is payload.py's.
"""

from __future__ import annotations

import html
import math

import traitlets as t

from ...records.divergence import Divergence
from ..defaults import settings
from ..whitespace import shown
from .payload import encode_divergence, header_stats
from .widget import DivergenceWidget

__all__ = ["DivergenceView", "divergence_html"]


def _side_label(meta: dict, side: str) -> str:
    info = meta.get(side) or {}
    name = info.get("model") or info.get("source") or side
    return f"{name} ({info['dtype']})" if info.get("dtype") else str(name)


class DivergenceView(DivergenceWidget):
    """A `Divergence` (one text) as a coloured text with a header and a hover panel.

    Attributes
    ----------
    color_mode : str
        ``"kld"``: each token by its KL(base ‖ candidate) (the lower end of a range, outlined dashed);
        ``"delta_p"``: by |q(y) − p(y)| of the token that followed.
    selected : int
        The position shown in the panel when nothing is hovered (-1: none); "next flip" sets it.
    stats : dict
        Read-only, from ``summary()``: mean and max KL as [low, high] (equal where exact; None: no
        upper bound), same-top share, PPL ratio, scored tokens, the flips' positions, the colour ranges.
    labels : [str, str]
        The base's and the candidate's names (from the record's meta).
    size : str
        ``"normal"`` or ``"projector"`` (everything at 1.25 times, for a class); by default
        ``lv.settings.size``, as the trace view.
    """

    color_mode = t.Enum(("kld", "delta_p"), default_value="kld").tag(sync=True)

    def __init__(self, divergence: Divergence, **kwargs) -> None:
        if not isinstance(divergence, Divergence):
            raise TypeError(f"DivergenceView shows one Divergence (one text of lv.divergence), got "
                            f"{type(divergence).__name__}; for many texts show each: view(ds[i])")
        self._divergence = divergence
        meta = divergence.meta
        kwargs.setdefault("size", settings.size)
        super().__init__(_payload=encode_divergence(divergence), stats=header_stats(divergence),
                         labels=[_side_label(meta, "base"), _side_label(meta, "candidate")], **kwargs)

    @property
    def divergence(self) -> Divergence:
        return self._divergence

    @t.validate("selected")
    def _check_selected(self, proposal):
        value, n = proposal["value"], len(self._divergence)
        if not -1 <= value < n:
            raise t.TraitError(f"selected must be -1 (none) or a position between 0 and {n - 1}, got {value}")
        return value

    def page_html(self, max_state_bytes: int | None = None) -> str:
        """A static HTML copy (no script): the header and the coloured text (`divergence_html`)."""
        return divergence_html(self._divergence, self.labels)

    def page_title(self) -> str:
        return "logprob_viz: divergence"

    def fallback_html(self) -> str:
        return self.page_html()

    def __repr__(self) -> str:
        d = getattr(self, "_divergence", None)
        return f"DivergenceView({d!r})" if d is not None else object.__repr__(self)


def _kl_text(low: float, high: float) -> str:
    if math.isnan(low):
        return "not scored"
    if low == high:
        return f"KL {low:.4g}"
    return f"KL in [{low:.4g}, {'∞' if math.isinf(high) else f'{high:.4g}'}]"


def _range_text(bounds) -> str:
    low, high = bounds
    if low == high:
        return f"{low:.4g}"
    return f"[{low:.4g}, {'∞' if high is None else f'{high:.4g}'}]"


def divergence_html(d: Divergence, labels=("base", "candidate")) -> str:
    """The divergence as a static HTML fragment: the header's figures and the text coloured by KL
    (its lower end where a range, dashed), flips underlined; each token's numbers in its title."""
    s = header_stats(d)
    same = "?" if s["same_top"] is None else f"{100 * s['same_top']:.1f}%"
    ppl = "?" if s["ppl_ratio"] is None else f"{s['ppl_ratio']:.4f}"
    head = (f"{html.escape(labels[0])} → {html.escape(labels[1])}: mean KLD {_range_text(s['mean_kld'])} nats · "
            f"same top {same} · PPL ratio {ppl} · {len(s['flips'])} flips of {s['tokens']} tokens")
    out = ['<div class="lvd-static" style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px">',
           f"<div>{head}</div>",
           '<div style="font-family: var(--jp-code-font-family, monospace); white-space: pre-wrap; '
           'overflow-wrap: anywhere; margin-top: 6px">']
    a, top = d.arrays, s["kld_range"]
    flips = set(s["flips"])
    for i, text in enumerate(d.tokens):
        low, high = float(a["kld_low"][i]), float(a["kld_high"][i])
        body = html.escape(shown(text)) + "\n" * text.count("\n")
        alpha = 0.0 if math.isnan(low) else min(1.0, low / top)
        style = f"background: rgba(230, 97, 1, {alpha:.3f})"
        if low != high and not math.isnan(low):
            style += "; outline: 1px dashed #888"
        if i in flips:
            style += "; box-shadow: inset 0 -3px 0 #1976d2"
        title = "not scored" if math.isnan(low) else f"{_kl_text(low, high)}, Δp {a['delta_p'][i]:.4g}"
        title += " · flip" if i in flips else ""
        out.append(f'<span style="{style}" title="{html.escape(title)}">{body}</span>')
    out.append("</div></div>")
    return "".join(out)
