"""`lv.audit`: re-score a served trace's tokens with a reference and say what the server's numbers are
(raw, scaled, processed, or a mismatch). The reading of the numbers is `records.audit`; this module
gets the reference distribution at every served position, from one of two references:

- a local runner (`lv.load`): the prompt and the served tokens teacher-forced through the model in
  one forward pass, the whole next-token distribution;
- a llama-server (`lv.connect(url)` on llama.cpp): the server's own numbers before the samplers, each
  served token forced after the ones before (`remote.llamacpp_score`, as `score` does), the top N at
  each position (`records.audit.TopN`). llama.cpp computes its quantized model with 8-bit activations
  and moves logprobs by up to ~1.4 nats against a float32 runner on the same GGUF, far beyond the
  audit's tolerance; the same server forced on the same tokens gives the very numbers it generated
  with (measured equal to the last bit). Its default chain cuts to top-k 40 first, so a top N of at
  least that holds every token a processed distribution keeps.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..records.audit import DEFAULT_TOLERANCE, Audit, Listed, TopN, classify
from ..records.trace import Trace
from ..records.trace_fields import is_int
from .errors import LogprobFormatError
from .readers import read

__all__ = ["audit", "DEFAULT_TOP_N", "when_audited"]

NO_LOGPROBS = "the provider returned no logprobs"
# A llama-server reference's top N per position: above llama.cpp's default top-k (40), so a processed
# distribution's kept set is inside it, and deep enough that the tail beyond it bounds the normaliser
# of a temperature below 1 within the tolerance (measured on the suite's prompt: tail mass <= 0.09 at N = 100).
DEFAULT_TOP_N = 100

_audited_hooks: list = []  # called with each trace `audit` has just judged (views.logprob.served)


def when_audited(hook) -> None:
    """Call ``hook(trace)`` each time `audit` records its verdict in a trace's meta, so that a view
    already showing that trace redraws its badge (views/logprob/served.py) without being shown again."""
    if hook not in _audited_hooks:
        _audited_hooks.append(hook)


def audit(trace: Trace, reference, *, prompt: str | None = None, settings: dict | None = None,
          tolerance: float = DEFAULT_TOLERANCE, top_n: int | None = None) -> Audit:
    """What the served `trace`'s logprobs are, checked against `reference` (the same model).

    Parameters
    ----------
    trace : Trace or a response body
        A served trace (`lv.connect(...).generate`, `lv.read` of a response), or the body itself (read
        here). Its generated tokens are audited; the prompt part of an echoed response only places them.
    reference : TransformersRunner or a llama.cpp runner
        The same model in the kernel (`lv.load(...)`): it re-scores the served tokens teacher-forced.
        Or a llama-server serving it (`lv.connect(url)`): its own numbers before the samplers, each
        served token forced, its top `top_n` at each position; what that cannot decide (the whole
        vocabulary's normaliser at T != 1) is bounded, and said in ``Audit.limits``.
    prompt : str, optional
        The text the served tokens continue. A trace from `lv.connect` carries it (``meta["prompt"]``),
        as does one that echoed its prompt; a body read by `lv.read` needs it.
    settings : dict, optional
        The sampling settings the request sent (``temperature``, ``top_k``, ``top_p``, ``min_p``); by
        default those in ``trace.meta`` (a trace from `lv.connect` records them). Processed numbers
        then also name the engines whose order, with exactly these, keeps what the server kept.
    tolerance : float
        Nats per logprob within which a served number agrees (see `records.audit.DEFAULT_TOLERANCE`).
    top_n : int, optional
        A llama-server reference's tokens per position: by default `DEFAULT_TOP_N`, or more where the
        trace lists more or the request's top-k is larger.

    The verdict is also kept in the audited trace's ``meta["audit"]`` (`Audit.verdict`): a view of
    that trace (``trace.view()``, `lv.LogprobView`) shows it as a badge.
    """
    if not isinstance(trace, Trace):
        trace = _read_body(trace)
    engine = getattr(reference, "engine", None)
    on_server = getattr(engine, "server", None) == "llama.cpp"
    if not on_server and not callable(getattr(engine, "model", None)):
        raise TypeError("reference must be the served model in the kernel (lv.load(...)), which re-scores the served "
                        "tokens with the whole distribution, or a llama-server serving it (lv.connect(url)); got "
                        f"{type(reference).__name__}" + (f" on {engine.server}" if hasattr(engine, "server") else ""))
    values, top_values = _served_values(trace)
    served = [i for i in range(trace.prompt_len, len(trace)) if math.isfinite(values[i])]
    if not served:
        raise ValueError(f"{NO_LOGPROBS}: the trace has no logprob for any generated token (reasoning models and "
                         "some streams send none); ask the server for logprobs to audit them")
    requested = settings if settings is not None else _requested(trace.meta)
    ids_of = _ServerIds(engine) if on_server else _Ids(engine)
    token_ids = [ids_of.chosen(trace, i) for i in range(len(trace))]
    context = token_ids[:trace.prompt_len] if trace.prompt_len else _prompt_ids(trace, prompt, ids_of.encode)
    rows = [len(context) + i - trace.prompt_len - 1 for i in served]
    listed = [_listed(trace, i, token_ids[i], ids_of, values, top_values) for i in served]
    if on_server:
        n = _top_n(top_n, listed, requested)
        refs = _server_rows(engine, trace, context, token_ids[trace.prompt_len:], rows, n, listed)
    else:
        refs = _reference_rows(engine, context + token_ids[trace.prompt_len:], rows)
    result = classify(listed, refs, tolerance, requested)
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


def _prompt_ids(trace: Trace, prompt: str | None, encode) -> list[int]:
    """The ids before the first generated token of a trace without its prompt: the prompt text encoded."""
    text = prompt if prompt is not None else trace.meta.get("prompt")
    if not isinstance(text, str) or not text:
        raise ValueError("give prompt=, the text the served tokens continue: this trace has neither its prompt "
                         "(no echo) nor meta['prompt'] (a body read by lv.read carries none)")
    return encode(text)


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

    def encode(self, text: str) -> list[int]:
        return list(self.engine.tokenizer(text)["input_ids"])

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


# -- a llama-server as the reference: its own numbers before the samplers, top N per position ---------


class _ServerIds(_Ids):
    """A served token's id on a llama-server reference: the id the server gave, else its text through the
    server's /tokenize (it must be one token there)."""

    def encode(self, text: str) -> list[int]:
        return [t.id for t in self.engine.tokenize(text, add_special=True)]  # as /completion encodes a text

    def chosen(self, trace: Trace, i: int) -> int:
        if trace.token_ids[i] >= 0:
            return int(trace.token_ids[i])
        return self._one(trace.tokens[i], i)

    def alternative(self, trace: Trace, i: int, j: int) -> int:
        if trace.top_ids is not None and trace.top_ids[i, j] >= 0:
            return int(trace.top_ids[i, j])
        return self._one(trace.top_tokens[i][j], i)

    def _one(self, text: str, i: int) -> int:
        if self._by_text is None:
            self._by_text = {}
        if text not in self._by_text:
            ids = [t.id for t in self.engine.tokenize(text, add_special=False)]
            self._by_text[text] = ids[0] if len(ids) == 1 else None
        if self._by_text[text] is None:
            raise ValueError(f"the served token {text!r} at position {i} is not one token on the reference server "
                             "(its /tokenize): audit with the model the server ran (its tokenizer decides the tokens)")
        return self._by_text[text]


def _top_n(top_n: int | None, listed: list[Listed], requested: dict | None) -> int:
    """The reference's tokens per position: `top_n`, else enough for what was listed and the request's top-k."""
    if top_n is not None:
        if not is_int(top_n) or top_n < 1:
            raise ValueError(f"top_n must be a positive number of tokens, got {top_n!r}")
        return top_n
    top_k = (requested or {}).get("top_k")
    wanted = [DEFAULT_TOP_N, max(len(row.ids) for row in listed)]
    return max(wanted + ([int(top_k)] if _is_number(top_k) and top_k > 0 else []))


def _server_rows(engine, trace: Trace, context: list[int], generated: list[int], rows: list[int], n: int,
                 listed: list[Listed]) -> list[TopN]:
    """The server's own top `n` (before its samplers) at each of `rows` (row r predicts ids[r + 1]), each
    generated token forced after the ones before (the engine's score_ids: `remote.llamacpp_score`)."""
    vocab = engine.vocab_size
    if not vocab:
        raise ValueError(f"the reference server at {engine.base_url} does not say its vocabulary's size (/v1/models "
                         "meta.n_vocab): a top-N reference needs it to bound the tokens beyond its N")
    beyond = sorted({int(i) for row in listed for i in row.ids if i >= vocab} | {i for i in context + generated
                                                                                   if i >= vocab})
    if beyond:
        raise ValueError(f"the served token ids {beyond[:5]} are beyond the vocabulary of the reference server at "
                         f"{engine.base_url} ({vocab} tokens): it serves another model than the one audited")
    last = max(rows) + 2  # the ids up to the last audited token
    try:
        forced = engine.score_ids([(context + generated)[:last]], min(n, vocab), [len(context)])[0]
    except ValueError as e:  # (a text beyond the server's context: said before anything is forced)
        raise ValueError(f"the reference cannot re-score the prompt and the served tokens: {e}") from e
    out = []
    for row, r in zip(listed, rows, strict=True):
        at = r + 1
        served_bytes, their_bytes = trace.token_bytes[row.index], forced.token_bytes[at]
        # (a served text of split UTF-8 does not know its bytes: only whole characters are compared)
        if served_bytes != their_bytes and _whole_text(their_bytes):
            raise ValueError(f"the served token {served_bytes!r} at position {row.index} is {their_bytes!r} on the "
                             f"reference server at {engine.base_url} (the same id {int(forced.token_ids[at])}): it "
                             "serves another model (tokenizer) than the one audited")
        lp = np.full(vocab, np.nan)
        known = forced.top_ids[at] >= 0
        lp[forced.top_ids[at][known]] = forced.top_logprobs[at][known]
        lp[int(forced.token_ids[at])] = forced.logprobs[at]  # the forced token's own, out of the whole vocabulary
        out.append(TopN(lp, int(known.sum())))
    return out


def _whole_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
