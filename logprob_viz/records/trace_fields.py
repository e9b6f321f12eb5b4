"""The trace's numeric fields, owned once: each field's dtype, shape and the value that means "unknown".

Every producer (the local recorder, the lens, the readers' assembler) and every join of traces
reads the fill values from here instead of restating them, so a new field or a changed fill is
one line. The JavaScript decoder (`js/payload.js`) mirrors this table.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

__all__ = ["Field", "FIELDS", "PER_TOKEN", "ALTERNATIVES", "PROCESSED", "empty", "vector", "matrix", "check_len",
           "as_list", "as_list_of"]


@dataclass(frozen=True)
class Field:
    """One array of a trace: [N] per token, or [N, K] with one value per alternative."""

    name: str
    dtype: type
    fill: float | int  # where the source gave nothing, and the padding of rows shorter than K
    per_alternative: bool
    meaning: str

    def empty(self, n: int, k: int = 0) -> np.ndarray:
        """``n`` rows of "unknown" (``k`` columns for a per-alternative field)."""
        return np.full((n, k) if self.per_alternative else n, self.fill, dtype=self.dtype)

    def widen(self, arr: np.ndarray, k: int) -> np.ndarray:
        """A per-alternative array padded with the fill to ``k`` columns (unchanged when it has them)."""
        if arr.shape[1] >= k:
            return arr
        return np.pad(arr, ((0, 0), (0, k - arr.shape[1])), constant_values=self.fill)


# int32 ids: vocabularies are far below 2**31, and it halves the per-token cost.
FIELDS = {
    f.name: f
    for f in (
        Field("token_ids", np.int32, -1, False, "the token's id; -1 where the source gave none"),
        Field("logprobs", np.float32, np.nan, False, "the chosen token's logprob; NaN where unknown"),
        Field("ranks", np.int32, 0, False, "1-based rank of the chosen token; 0 where unknown"),
        Field("entropy", np.float32, np.nan, False, "entropy of the full distribution (nats); NaN where unknown"),
        Field("top_logprobs", np.float32, -np.inf, True, "the alternatives' logprobs; -inf pads a short row"),
        Field("top_ids", np.int32, -1, True, "the alternatives' ids; -1 where unknown or padded"),
        Field("processed_logprobs", np.float32, np.nan, False,
              "the chosen token's logprob under the distribution sampled from; NaN where nothing was sampled"),
        Field("processed_top_logprobs", np.float32, -np.inf, True,
              "the alternatives' logprobs under the distribution sampled from; -inf where unknown or padded"),
    )
}
PER_TOKEN = ("token_ids", "logprobs", "ranks", "entropy")
ALTERNATIVES = ("top_logprobs", "top_ids")
PROCESSED = ("processed_logprobs", "processed_top_logprobs")  # both or neither (None when nothing was sampled)


def empty(name: str, n: int, k: int = 0) -> np.ndarray:
    """``n`` rows of field `name` meaning "unknown"."""
    return FIELDS[name].empty(n, k)


def as_array(name: str, value) -> np.ndarray:
    """np.asarray in field `name`'s dtype, naming the field when a value does not fit it (a token id of 2**40)."""
    dtype = FIELDS[name].dtype
    try:
        return np.asarray(value, dtype=dtype)
    except OverflowError:
        info = np.iinfo(dtype)
        raise ValueError(f"{name} holds an integer outside {info.min}..{info.max}; token ids and ranks are "
                         "small non-negative ints (-1 / 0 where unknown)") from None
    except (TypeError, ValueError) as error:
        raise type(error)(f"{name} must hold numbers ({np.dtype(dtype).name}): {error}") from None


def vector(name: str, value, n: int) -> np.ndarray:
    """Field `name` as given (one value per token), or "unknown" for every token when None."""
    field = FIELDS[name]
    if value is None:
        return field.empty(n)
    arr = as_array(name, value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per token), got shape {arr.shape}")
    check_len(name, arr.shape[0], n)
    return arr


def matrix(name: str, value, n: int, k: int) -> np.ndarray:
    """Field `name` as given ([N, >= k]), or "unknown" everywhere ([N, k]) when None."""
    field = FIELDS[name]
    if value is None:
        return field.empty(n, k)
    arr = as_array(name, value)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(n, 0) if n == 0 else arr
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape [N={n}, K], got shape {arr.shape}")
    if arr.shape[1] < k:
        raise ValueError(f"{name} has {arr.shape[1]} columns but some token has {k} alternatives")
    return arr


def check_len(name: str, got: int, n: int) -> None:
    if got != n:
        raise ValueError(f"{name} has {got} entries but there are {n} tokens; give one per token")


def as_list(value, name: str) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def as_list_of(kind: type, value, name: str) -> list:
    """A new list of `kind` (str or bytes) from `value`; copied in C when every entry already is one."""
    items = as_list(value, name)
    if set(map(type, items)) <= {kind}:
        return items  # as_list made a new list: the caller's list is never shared
    return [kind(x) for x in items]


def is_int(value) -> bool:
    """The package's one whole-number rule for what a user passes: a Python or NumPy integer, never
    a bool (``True`` is an int to Python, but ``top_logprobs=True`` is a mistake). Readers of server
    bodies keep their stricter JSON rule (``type(x) is int``, readers/checks.py)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_top_logprobs(top_logprobs, maximum: int, where: str = "for this runner") -> int:
    """The one rule for ``top_logprobs`` (the K of the alternatives' fields): 0 to `maximum`, the
    most a runner (or the lens) records; `where` names whose limit it is."""
    if not is_int(top_logprobs) or not 0 <= top_logprobs <= maximum:
        raise ValueError(f"top_logprobs must be an int between 0 and {maximum} {where}, got {top_logprobs!r}")
    return int(top_logprobs)
