"""The logit lens's record: per-layer next-token predictions of one text (`runner.lens`).

Rows are layers, columns tokens. The arrays are computed model-side (`sources/local/lens.py`);
this record only holds and serves them, so it needs no torch.
"""

from __future__ import annotations

import numpy as np

from .tokens import display_token
from .trace import Trace
from .trace_fields import FIELDS, is_int

# the one top_logprobs rule lives with the runners (sources/base.py: no torch, nothing heavy)
from .trace_fields import check_top_logprobs as check_count
from .viewable import Viewable, show

__all__ = ["Lens", "MAX_TOP_LOGPROBS", "check_top_logprobs"]

# The lens keeps K alternatives per layer and token: O(layers x tokens x K), so K stays small.
MAX_TOP_LOGPROBS = 20


def check_top_logprobs(top_logprobs) -> int:
    """The runners' one top_logprobs rule (the lens is a runner's method), with the lens's own limit."""
    return check_count(top_logprobs, MAX_TOP_LOGPROBS, "for the logit lens")


def _pad_first(name: str, arr: np.ndarray) -> np.ndarray:
    """Prepend the first position, which nothing predicts (unknown, as in a Trace)."""
    field = FIELDS[name]
    first = field.empty(1, *arr.shape[1:])
    return np.concatenate([first, arr.astype(field.dtype, copy=False)])


class Lens(Viewable):
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
    kl_to_final : float32 [L, N]
        KL(final || layer) in nats: how far each layer's distribution is from the model's own
        output (0 at the final block), computed in the same forward pass; NaN in column 0.
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
        self.text_of = text_of = vocab.__getitem__  # a token id -> its display text (the views use it too)
        self.token_bytes = [vocab.bytes_of(i) for i in ids]
        self.tokens = [display_token(b) for b in self.token_bytes]
        for name in ("logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
            setattr(self, name, np.stack([_pad_first(name, got[b][name]) for b in rows]))
        self.top_tokens = [[[text_of(i) for i in row] for row in layer.tolist()] for layer in self.top_ids]
        # KL(final || layer) in nats, per layer and token (column 0 NaN, as nothing predicts it)
        self.kl_to_final = np.stack(
            [np.concatenate([[np.nan], got[b]["kl_to_final"]]).astype(np.float32) for b in rows])
        self._final_ranks = np.concatenate([[0], got[final]["ranks"]]).astype(np.int32)
        self._final_logprobs = np.concatenate([[np.nan], got[final]["logprobs"]]).astype(np.float32)
        trace_fields = ("logprobs", "ranks", "entropy", "top_logprobs", "top_ids")
        last = {name: _pad_first(name, got[final][name]) for name in trace_fields}
        self.trace = Trace(
            tokens=self.tokens,
            token_bytes=self.token_bytes,
            token_ids=self.token_ids,
            top_tokens=[[]] + [[text_of(i) for i in row] for row in last["top_ids"][1:].tolist()],
            prompt_len=int(meta.get("prompt_len", len(ids))),  # a text: all prompt; a trace: its own split
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
        if not is_int(position) or not 0 <= position < n:
            raise ValueError(f"position must be a token index between 0 and {n - 1}, got {position!r}")
        position = int(position)
        k = self.k if top_logprobs is None else check_top_logprobs(top_logprobs)
        if k <= self.k or position == 0:
            k = min(k, self.k)
            part = {name: getattr(self, name)[:, position] for name in ("logprobs", "ranks", "entropy", "kl_to_final")}
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
            "top_tokens": [[self.text_of(i) for i in row] for row in np.asarray(part["top_ids"]).tolist()],
        }

    def commitment(self, top: int = 1, p: float | None = None) -> np.ndarray:
        """For each token, the block from which the model has decided on it: int array [N].

        The value is a block number (as in ``lens.layers``, 0-based), the first of the lens's
        layers from which the actual token stays within the top-`top` guesses (or, with `p`,
        keeps a probability >= p) at every later layer of the lens and at the model's final
        block; -1 when no row of the lens starts such a run (a lens of picked layers that leaves
        out the final block says -1 for a token decided only there), and -1 at position 0, which
        nothing predicts.
        """
        if p is None:
            if not is_int(top) or top < 1:
                raise ValueError(f"top must be a positive int, got {top!r}")
            rows, final = self.ranks, self._final_ranks
            held = (rows >= 1) & (rows <= top)
            final_held = (final >= 1) & (final <= top)
        else:
            if not isinstance(p, (int, float, np.floating)) or not 0 < p <= 1:
                raise ValueError(f"p must be a probability in (0, 1], got {p!r}")
            with np.errstate(invalid="ignore"):
                held = self.logprobs >= np.log(p)
                final_held = self._final_logprobs >= np.log(p)
        # stays: held at this row and at every row after it, and at the final block
        stays = np.flip(np.logical_and.accumulate(np.flip(held, 0), axis=0), 0) & final_held[None, :]
        first = np.argmax(stays, axis=0)  # the first row where it stays (0 where none: masked below)
        out = np.where(stays.any(axis=0), self.layers[first], -1).astype(np.int32)
        out[0] = -1
        return out

    def view(self, **kwargs):
        """The lens view (a widget): layers x tokens heatmap, alternatives on hover, per-layer plot on pin."""
        return show(self, "view", **kwargs)

    def nbytes(self) -> int:
        """Bytes of the arrays the lens keeps (O(L x N x K))."""
        names = ("logprobs", "ranks", "entropy", "kl_to_final", "top_logprobs", "top_ids", "token_ids")
        return sum(getattr(self, n).nbytes for n in names)
