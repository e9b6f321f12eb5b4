"""`lv.audit`: re-score a served trace's tokens with a local reference runner and say what the server's
numbers are (raw, scaled, processed, or a mismatch). The reading of the numbers is `records.audit`;
this module gets the reference distribution: the prompt and the served tokens, teacher-forced through
the local model in one forward pass, the whole next-token distribution at every served position.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..records.audit import DEFAULT_TOLERANCE, Audit, Listed, classify
from ..records.trace import Trace
from .errors import LogprobFormatError
from .readers import read

__all__ = ["audit", "when_audited"]

NO_LOGPROBS = "the provider returned no logprobs"

_audited_hooks: list = []  # called with each trace `audit` has just judged (views.logprob.served)


def when_audited(hook) -> None:
    """Call ``hook(trace)`` each time `audit` records its verdict in a trace's meta, so that a view
    already showing that trace redraws its badge (views/logprob/served.py) without being shown again."""
    if hook not in _audited_hooks:
        _audited_hooks.append(hook)


def audit(trace: Trace, reference, *, prompt: str | None = None, settings: dict | None = None,
          tolerance: float = DEFAULT_TOLERANCE) -> Audit:
    """What the served `trace`'s logprobs are, checked against `reference` (a local runner of the same model).

    Parameters
    ----------
    trace : Trace or a response body
        A served trace (`lv.connect(...).generate`, `lv.read` of a response), or the body itself (read
        here). Its generated tokens are audited; the prompt part of an echoed response only places them.
    reference : TransformersRunner
        The same model in the kernel (`lv.load(...)`): it re-scores the served tokens teacher-forced.
    prompt : str, optional
        The text the served tokens continue. A trace from `lv.connect` carries it (``meta["prompt"]``),
        as does one that echoed its prompt; a body read by `lv.read` needs it.
    settings : dict, optional
        The sampling settings the request sent (``temperature``, ``top_k``, ``top_p``, ``min_p``); by
        default those in ``trace.meta`` (a trace from `lv.connect` records them). Processed numbers
        then also name the engines whose order, with exactly these, keeps what the server kept.
    tolerance : float
        Nats per logprob within which a served number agrees (see `records.audit.DEFAULT_TOLERANCE`).

    The verdict is also kept in the audited trace's ``meta["audit"]`` (`Audit.verdict`): a view of
    that trace (``trace.view()``, `lv.LogprobView`) shows it as a badge.
    """
    if not isinstance(trace, Trace):
        trace = _read_body(trace)
    engine = getattr(reference, "engine", None)
    if getattr(engine, "model", None) is None:
        raise TypeError("reference must be a local runner of the served model (lv.load(...)): it re-scores the "
                        f"served tokens with the whole distribution; got {type(reference).__name__}")
    values, top_values = _served_values(trace)
    served = [i for i in range(trace.prompt_len, len(trace)) if math.isfinite(values[i])]
    if not served:
        raise ValueError(f"{NO_LOGPROBS}: the trace has no logprob for any generated token (reasoning models and "
                         "some streams send none); ask the server for logprobs to audit them")
    ids_of = _Ids(engine)
    token_ids = [ids_of.chosen(trace, i) for i in range(len(trace))]
    context = token_ids[:trace.prompt_len] if trace.prompt_len else _prompt_ids(trace, prompt, engine)
    refs = _reference_rows(engine, context + token_ids[trace.prompt_len:],
                           [len(context) + i - trace.prompt_len - 1 for i in served])
    listed = [_listed(trace, i, token_ids[i], ids_of, values, top_values) for i in served]
    result = classify(listed, refs, tolerance, settings if settings is not None else _requested(trace.meta))
    trace.meta["audit"] = result.verdict()  # the trace view shows it as a badge (views.logprob.served)
    for hook in list(_audited_hooks):
        hook(trace)  # a view on show already: its badge follows
    return result


def _requested(meta: dict) -> dict | None:
    """The sampling settings a trace's meta records (lv.connect: top level; llama.cpp's reader: "sampling")."""
    names = ("temperature", "top_k", "top_p", "min_p")
    for where in (meta, meta.get("sampling") or {}):
        found = {name: where[name] for name in names if _is_number(where.get(name))}
        if found:
            return found
    return None


def _served_values(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """The numbers the server gave: the trace's logprobs, or, where a reader kept the server's numbers as
    the sampled-from distribution only (llama.cpp's post_sampling_probs: the model's are NaN), those."""
    generated = trace.logprobs[trace.prompt_len:]
    if trace.processed_logprobs is not None and not np.isfinite(generated).any():
        return trace.processed_logprobs, trace.processed_top_logprobs
    return trace.logprobs, trace.top_logprobs


def _read_body(body) -> Trace:
    try:
        trace = read(body)
    except LogprobFormatError as error:
        if "no logprobs" in str(error):
            raise ValueError(f"{NO_LOGPROBS}: {error}") from error
        raise
    if isinstance(trace, list):
        raise ValueError(f"this body holds {len(trace)} traces: audit one, lv.audit(lv.read(body)[i], ...)")
    return trace


def _prompt_ids(trace: Trace, prompt: str | None, engine) -> list[int]:
    """The ids before the first generated token of a trace without its prompt: the prompt text encoded."""
    text = prompt if prompt is not None else trace.meta.get("prompt")
    if not isinstance(text, str) or not text:
        raise ValueError("give prompt=, the text the served tokens continue: this trace has neither its prompt "
                         "(no echo) nor meta['prompt'] (a body read by lv.read carries none)")
    return list(engine.tokenizer(text)["input_ids"])


def _reference_rows(engine, ids: list[int], rows: list[int]) -> list[np.ndarray]:
    """log_softmax (V,) float64 of the reference model at each of `rows` (row r predicts ids[r + 1])."""
    import torch

    with torch.inference_mode():
        logits = engine.model(input_ids=torch.tensor([ids], device=engine.device)).logits[0]  # (T, V)
        picked = logits[torch.tensor(rows, device=logits.device)].double()  # (N, V)
        return list(torch.log_softmax(picked, dim=-1).cpu().numpy())


class _Ids:
    """A served token's id in the reference vocabulary: the id the server gave, else its exact bytes,
    else (an alternative known only by its text) its display text."""

    def __init__(self, engine):
        self.engine = engine
        self._by_bytes: dict[bytes, int] | None = None
        self._by_text: dict[str, int] | None = None

    def chosen(self, trace: Trace, i: int) -> int:
        if trace.token_ids[i] >= 0:
            return int(trace.token_ids[i])
        return self._lookup(self.by_bytes, trace.token_bytes[i], trace.tokens[i], i)

    def alternative(self, trace: Trace, i: int, j: int) -> int:
        if trace.top_ids is not None and trace.top_ids[i, j] >= 0:
            return int(trace.top_ids[i, j])
        text = trace.top_tokens[i][j]
        return self._lookup(self.by_text, text, text, i)

    @property
    def by_bytes(self) -> dict[bytes, int]:
        if self._by_bytes is None:
            table = self.engine.vocab.byte_table()
            self._by_bytes = {b: i for i, b in reversed(list(enumerate(table)))}  # the lowest id wins
        return self._by_bytes

    @property
    def by_text(self) -> dict[str, int]:
        if self._by_text is None:
            vocab = self.engine.vocab
            self._by_text = {vocab[i]: i for i in reversed(range(len(vocab)))}
        return self._by_text

    @staticmethod
    def _lookup(table: dict, key, text: str, i: int) -> int:
        if key not in table:
            raise ValueError(f"the served token {text!r} at position {i} is not one token of the reference model's "
                             "vocabulary: audit with the model the server ran (its tokenizer decides the tokens)")
        return table[key]


def _listed(trace: Trace, i: int, chosen: int, ids_of: _Ids, logprobs, top_logprobs) -> Listed:
    """The chosen token and the listed alternatives at position i, one value per id."""
    values = {chosen: float(logprobs[i])}
    for j, value in enumerate(top_logprobs[i]):
        if j < len(trace.top_tokens[i]):
            values.setdefault(ids_of.alternative(trace, i, j), float(value))
    ids = np.fromiter(values, dtype=np.int64, count=len(values))
    return Listed(i, trace.tokens[i], ids, np.array(list(values.values()), dtype=np.float64))


def _is_number(value) -> bool:
    """A setting's value given as a number (a bool is not one, though Python counts it as an int)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)
