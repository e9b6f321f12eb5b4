"""The logit lens's record: per-layer next-token predictions of one text (`runner.lens`).

Rows are layers, columns tokens. The arrays are computed model-side (`sources/local/lens.py`);
this record only holds and serves them, so it needs no torch.
"""

from __future__ import annotations

import numpy as np

# the one top_logprobs rule lives with the runners (sources/base.py: no torch, nothing heavy)
from ..sources.base import check_top_logprobs as check_count
from .fields import FIELDS
from .tokens import display_token
from .trace import Trace

__all__ = ["Lens", "MAX_TOP_LOGPROBS", "check_top_logprobs"]

# The lens keeps K alternatives per layer and token: O(layers x tokens x K), so K stays small.
MAX_TOP_LOGPROBS = 20


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def check_top_logprobs(top_logprobs) -> int:
    """The runners' one top_logprobs rule (the lens is a runner's method), with the lens's own limit."""
    return check_count(top_logprobs, MAX_TOP_LOGPROBS, "for the logit lens")


def _pad_first(name: str, arr: np.ndarray) -> np.ndarray:
    """Prepend the first position, which nothing predicts (unknown, as in a Trace)."""
    field = FIELDS[name]
    first = field.empty(1, *arr.shape[1:])
    return np.concatenate([first, arr.astype(field.dtype, copy=False)])


class Lens:
    """Per-layer next-token predictions of one text. Rows are layers, columns tokens.

    Attributes
    ----------
    layers : int array [L]
        The block each row was read after (0-based); the model has ``n_blocks`` blocks.
    tokens, token_ids : the text's N tokens (display text, ids).
    logprobs, entropy : float32 [L, N]
        The actual token's logprob and the entropy at each layer; position i is token i given
        the tokens before it, so column 0 is NaN.
    ranks : int32 [L, N]
        1-based rank of the actual token at each layer; 0 in column 0.
    top_ids, top_logprobs : [L, N, K]; top_tokens : list [L][N][K] of str
        Each layer's K most likely next tokens.
    trace : Trace
        The final block's row as an ordinary trace: the model's own output (as ``runner.score``).
    """

    def __init__(self, ids, rows, got, final, k, n_blocks, meta, *, vocab, rerun=None):
        # rerun(ids, layers, k, positions) -> per-layer summaries: the model-side read-out, so that
        # `detail` can ask for more alternatives than were kept; None for a lens without its model.
        self._rerun = rerun
        self.k, self.n_blocks, self.meta = k, n_blocks, meta
        self.layers = np.array(rows, dtype=np.int32)
        self.token_ids = np.array(ids, dtype=np.int32)
        self._text_of = text_of = vocab.__getitem__
        self.token_bytes = [vocab.bytes_of(i) for i in ids]
        self.tokens = [display_token(b) for b in self.token_bytes]
        for name in ("logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
            setattr(self, name, np.stack([_pad_first(name, got[b][name]) for b in rows]))
        self.top_tokens = [[[text_of(i) for i in row] for row in layer.tolist()] for layer in self.top_ids]
        last = {name: _pad_first(name, got[final][name]) for name in got[final]}
        self.trace = Trace(
            tokens=self.tokens,
            token_bytes=self.token_bytes,
            token_ids=self.token_ids,
            top_tokens=[[]] + [[text_of(i) for i in row] for row in last["top_ids"][1:].tolist()],
            prompt_len=len(ids),
            meta={**meta, "mode": "score", "lens_layer": final},
            **last,
        )

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def shape(self) -> tuple[int, int]:
        """(layers, tokens)."""
        return self.logprobs.shape

    def __repr__(self) -> str:
        return f"<Lens {self.shape[0]} layers x {len(self)} tokens, K={self.k}, {self.meta.get('model')}>"

    def detail(self, position: int, top_logprobs: int | None = None) -> dict:
        """One token's per-layer details: how each layer saw the token at `position` coming.

        With ``top_logprobs`` up to the lens's K the details come from the kept arrays; with
        more (up to 20), the model is run again over the tokens before `position`.

        Returns a dict: ``position``, ``token``, ``layers`` [L], ``logprobs``, ``ranks``,
        ``entropy`` [L], ``top_ids``, ``top_logprobs`` [L, K'] and ``top_tokens`` [L][K'].
        """
        n = len(self)
        if not _is_int(position) or not 0 <= position < n:
            raise ValueError(f"position must be a token index between 0 and {n - 1}, got {position!r}")
        position = int(position)
        k = self.k if top_logprobs is None else check_top_logprobs(top_logprobs)
        if k <= self.k or position == 0:
            k = min(k, self.k)
            part = {name: getattr(self, name)[:, position] for name in ("logprobs", "ranks", "entropy")}
            part["top_ids"] = self.top_ids[:, position, :k]
            part["top_logprobs"] = self.top_logprobs[:, position, :k]
        else:
            if self._rerun is None:
                raise ValueError(f"this lens kept {self.k} alternatives and has no model to compute more; "
                                 f"ask for top_logprobs <= {self.k}")
            ids = self.token_ids[: position + 1].tolist()
            got = self._rerun(ids, self.layers.tolist(), k, positions=[position - 1])
            part = {name: np.stack([got[b][name][0] for b in self.layers.tolist()]) for name in got[self.layers[0]]}
        return {
            "position": position,
            "token": self.tokens[position],
            "layers": self.layers.copy(),
            **part,
            "top_tokens": [[self._text_of(i) for i in row] for row in np.asarray(part["top_ids"]).tolist()],
        }

    def view(self, **kwargs):
        """The lens view (a widget): layers x tokens heatmap, alternatives on hover, per-layer plot on pin."""
        from ..views.lens_view import LensView

        return LensView(self, **kwargs)

    def to_html(self, path=None):
        """This record as one offline HTML page (static, no script): written to `path` (and the path
        returned), or returned as a string without one (see `logprob_viz.views.page.to_html`)."""
        from ..views.page import to_html

        return to_html(self, path)

    def _repr_mimebundle_(self, **kwargs):
        return self.view()._repr_mimebundle_(**kwargs)

    def nbytes(self) -> int:
        """Bytes of the arrays the lens keeps (O(L x N x K))."""
        names = ("logprobs", "ranks", "entropy", "top_logprobs", "top_ids", "token_ids")
        return sum(getattr(self, n).nbytes for n in names)
