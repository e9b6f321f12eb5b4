"""`RolloutView`: one rollout of a `Rollouts` (`rollouts.view(i, vocab=...)`), its text coloured by
|Δ| = |log π_b − log π_a| per token, the tokens whose ratio leaves [1/clip, clip] underlined ("next
outside" walks them), the forking tokens (top 20 % by entropy) overlined where entropy was given.
Hovering a token shows both sides' logprob and p, Δ, the ratio and Schulman's k1, k2, k3.

The same frontend as `DivergenceView` (js/divergence/): the payload's ``kind`` is ``"rollout"``.
Every per-token number is computed here in float64 from the record's arrays, then sent as float32
(so a tiny Δ keeps its relative precision; the frontend never subtracts two float32 logprobs).
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence

import numpy as np
import traitlets as t

from ...records.divergence.rollouts import Rollouts
from ...records.trace_fields import is_int
from ..codec import array, texts
from ..defaults import settings
from ..whitespace import shown
from .payload import nice_range
from .widget import DivergenceWidget

__all__ = ["RolloutView", "token_texts", "rollout_stats", "encode_rollout", "rollout_html"]

# |Δ| in nats at full colour: bf16 against fp32 moves a logprob by ~1e-3 to 1e-1
_ABS_DELTA_RANGES = (1e-4, 2e-4, 5e-4, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


def _check_index(rollouts: Rollouts, i) -> int:
    n = len(rollouts)
    if not is_int(i):
        raise TypeError(f"rollouts.view(i): i must be a rollout's index (an int from 0 to {n - 1}), "
                        f"got {type(i).__name__}")
    if not -n <= int(i) < n:
        raise IndexError(f"rollouts.view(i): there are {n} rollouts, so i must be from 0 to {n - 1} "
                         f"(or -{n} to -1 from the end), got {int(i)}")
    return int(i) % n


def token_texts(ids: np.ndarray, vocab=None) -> list[str]:
    """Each id's text: ``vocab.decode([id])`` for a tokenizer (or a runner's ``.tokenizer``),
    ``vocab[id]`` for a list (or a dict) of texts, else ``"<id>"``."""
    if vocab is None:
        return [f"<{int(x)}>" for x in ids]
    tokenizer = getattr(vocab, "tokenizer", vocab)  # a runner (lv.load()) carries its tokenizer
    if callable(getattr(tokenizer, "decode", None)):
        return [str(tokenizer.decode([int(x)])) for x in ids]
    if isinstance(vocab, (str, bytes)) or not isinstance(vocab, (Sequence, Mapping)):
        raise TypeError(f"vocab must be a tokenizer (with decode), a runner, or a list of texts indexed by "
                        f"token id; got {type(vocab).__name__}")
    out = []
    for position, x in enumerate(ids):
        try:
            text = vocab[int(x)]
        except (IndexError, KeyError):
            raise ValueError(f"vocab has no text for token id {int(x)} (token {position} of this rollout; "
                             f"vocab has {len(vocab)} entries): give the tokenizer the rollouts were "
                             "sampled with") from None
        if not isinstance(text, str):
            raise TypeError(f"vocab[{int(x)}] is a {type(text).__name__}, not a str: vocab must list texts")
        out.append(text)
    return out


def _number(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _span(rollouts: Rollouts, i: int) -> slice:
    return slice(int(rollouts.offsets[i]), int(rollouts.offsets[i + 1]))


def rollout_stats(rollouts: Rollouts, i: int) -> dict:
    """The header's figures of rollout i (its row of ``rollouts.table()``), the outside and forking
    tokens' positions in it, the clip and the colour range."""
    table, span = rollouts.table(), _span(rollouts, i)
    forking = rollouts.forking
    return {"label": str(rollouts.labels[i]), "index": i, "tokens": int(table["tokens"][i]),
            "mean_abs_delta": _number(table["mean_abs_delta"][i]), "max_abs_delta": _number(table["max_abs_delta"][i]),
            "share_outside": _number(table["share_outside"][i]), "mean_k3": _number(table["mean_k3"][i]),
            "reward": None if rollouts.rewards is None else _number(rollouts.rewards[i]), "clip": rollouts.clip,
            "outside": np.flatnonzero(rollouts.outside[span]).tolist(),
            "forking": None if forking is None else np.flatnonzero(forking[span]).tolist(),
            "abs_delta_range": nice_range(np.abs(rollouts.delta[span]), _ABS_DELTA_RANGES)}


def encode_rollout(rollouts: Rollouts, i: int, tokens: list[str]) -> dict:
    """The `_payload` trait: per token its text, both logprobs, Δ, ratio, k1, k2, k3 (float64 here)."""
    s = _span(rollouts, i)
    per_token = {"logprob_a": rollouts.logprobs_a[s], "logprob_b": rollouts.logprobs_b[s],
                 "delta": rollouts.delta[s], "ratio": rollouts.ratio[s], "k1": rollouts.k1[s],
                 "k2": rollouts.k2[s], "k3": rollouts.k3[s]}
    return {"kind": "rollout", "n": s.stop - s.start, "tokens": texts("tokens", tokens),
            **{name: array(name, values, "float32") for name, values in per_token.items()}}


class RolloutView(DivergenceWidget):
    """One rollout of a `Rollouts` as a coloured text with a header and a hover panel.

    Attributes
    ----------
    selected : int
        The token shown in the panel when nothing is hovered (-1: none); "next outside" sets it.
    stats : dict
        Read-only (`rollout_stats`): the rollout's mean and max |Δ|, share outside [1/clip, clip],
        mean k3, reward, the outside and forking tokens' positions, the colour range.
    labels : [str, str]
        The two sides' names: side a (the engine the tokens were sampled from), side b (the trainer).
    size : str
        ``"normal"`` or ``"projector"`` (everything at 1.25 times); by default ``lv.settings.size``.
    """


    def __init__(self, rollouts: Rollouts, i: int, *, vocab=None, **kwargs) -> None:
        if not isinstance(rollouts, Rollouts):
            raise TypeError(f"RolloutView shows one rollout of a Rollouts (lv.Divergence.from_logprobs), got "
                            f"{type(rollouts).__name__}")
        i = _check_index(rollouts, i)
        self._rollouts, self._index = rollouts, i
        tokens = token_texts(rollouts.token_ids[_span(rollouts, i)], vocab)
        self._tokens = tokens
        kwargs.setdefault("size", settings.size)
        kwargs.setdefault("labels", ["a (engine)", "b (trainer)"])
        super().__init__(_payload=encode_rollout(rollouts, i, tokens), stats=rollout_stats(rollouts, i), **kwargs)

    @property
    def rollouts(self) -> Rollouts:
        return self._rollouts

    @t.validate("selected")
    def _check_selected(self, proposal):
        value, n = proposal["value"], int(self._rollouts.lengths[self._index])
        if not -1 <= value < n:
            raise t.TraitError(f"selected must be -1 (none) or a token between 0 and {n - 1}, got {value}")
        return value

    def page_title(self) -> str:
        return "logprob_viz: rollout"

    def page_html(self, max_state_bytes: int | None = None) -> str:
        """A static HTML copy (no script): the header and the coloured text (`rollout_html`)."""
        return rollout_html(self._rollouts, self._index, self._tokens, self.labels)

    def fallback_html(self) -> str:
        return self.page_html()

    def __repr__(self) -> str:
        r = getattr(self, "_rollouts", None)
        return f"RolloutView(rollout {self._index} of {r!r})" if r is not None else object.__repr__(self)


def _g(x) -> str:
    return "?" if x is None or not math.isfinite(x) else f"{x:.4g}"


def rollout_html(rollouts: Rollouts, i: int, tokens: list[str], labels=("a", "b")) -> str:
    """Rollout i as a static HTML fragment (where no widget manager runs): the header's figures and the
    text coloured by |Δ|, outside tokens underlined; each token's numbers in its title."""
    s, span = rollout_stats(rollouts, i), _span(rollouts, i)
    c = rollouts.clip
    share = "?" if s["share_outside"] is None else f"{100 * s['share_outside']:.1f}%"
    reward = "" if s["reward"] is None else f" · reward {_g(s['reward'])}"
    head = (f"rollout {html.escape(s['label'])} ({html.escape(labels[0])} → {html.escape(labels[1])}): "
            f"mean |Δ| {_g(s['mean_abs_delta'])} · max |Δ| {_g(s['max_abs_delta'])} · outside [1/{c:g}, {c:g}] "
            f"{share} ({len(s['outside'])} of {s['tokens']}) · KL k3 {_g(s['mean_k3'])}{reward}")
    out = ['<div class="lvd-static" style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px">',
           f"<div>{head}</div>",
           '<div style="font-family: var(--jp-code-font-family, monospace); white-space: pre-wrap; '
           'overflow-wrap: anywhere; margin-top: 6px">']
    outside = set(s["outside"])
    a, b, delta = rollouts.logprobs_a[span], rollouts.logprobs_b[span], rollouts.delta[span]
    for j, text in enumerate(tokens):
        d = float(delta[j])
        alpha = 0.0 if math.isnan(d) else min(1.0, abs(d) / s["abs_delta_range"])
        style = f"background: rgba(230, 97, 1, {alpha:.3f})"
        style += "; box-shadow: inset 0 -3px 0 #1976d2" if j in outside else ""
        title = f"logprob a {_g(float(a[j]))}, b {_g(float(b[j]))}, Δ {_g(d)}, ratio {_g(math.exp(d))}"
        title += " · outside" if j in outside else ""
        body = html.escape(shown(text)) + "\n" * text.count("\n")
        out.append(f'<span style="{style}" title="{html.escape(title)}">{body}</span>')
    out.append("</div></div>")
    return "".join(out)
