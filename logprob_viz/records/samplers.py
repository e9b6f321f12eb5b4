"""`lv.sampled_from`: the distribution each serving engine samples from, in that engine's own order.

The same temperature, top-k, top-p and min-p keep different tokens in different engines, because each
applies them in its own order and with its own comparison at the boundary. Each order below is read
from the engine's source (the paths are in the repositories named):

- **transformers** (huggingface/transformers ``src/transformers/generation/utils.py``
  ``_get_logits_processor``; the warpers in ``generation/logits_process.py``): temperature, then
  ``TopKLogitsWarper`` (``scores < topk(...)[-1]`` go: ties with the k-th stay), ``TopPLogitsWarper``
  (ascending cumulative probability ``<= 1 - top_p`` goes: the token that crosses top_p stays; an exact
  equality cuts the next one), ``MinPLogitsWarper`` (``p < min_p * p_max`` goes). The local runner's
  rules (`records.sampling`) are these; this module reuses them for this engine.
- **vLLM V1** (vllm-project/vllm ``vllm/v1/sample/sampler.py`` ``Sampler.sample``: temperature, then
  the argmax-invariant logits processors, ``MinPLogitsProcessor`` in
  ``vllm/v1/sample/logits_processor/builtin.py``, on the whole distribution; then
  ``vllm/v1/sample/ops/topk_topp_sampler.py`` ``apply_top_k_top_p``: top-k with ties kept
  (``logits_sort < kth`` go), then top-p on the survivors' softmax with transformers' comparison).
  Min-p before top-p means top-p renormalises over fewer tokens and can keep fewer.
- **llama.cpp** (ggml-org/llama.cpp ``common/common.h`` default ``samplers`` and ``common/sampling.cpp``:
  ``top_k; typ_p; top_p; min_p; xtc; temperature``; the samplers in ``src/llama-sampler.cpp``, formerly
  ``src/llama-sampling.cpp``): top-k keeps exactly k after a partial sort (of tokens tied at the k-th,
  here the lower ids), top-p keeps the prefix until the running sum is ``>= top_p`` (the crossing token
  stays), min-p keeps ``logit >= max_logit + log(min_p)``: all at T = 1. Temperature comes last, so a
  high temperature flattens what min-p kept at T = 1 (llama.cpp #7498, #4091).
- **SGLang** (sgl-project/sglang ``python/sglang/srt/layers/sampler.py``): temperature, softmax, then
  with no min-p in the batch FlashInfer's ``top_k_top_p_sampling_from_probs(...,
  filter_apply_order="joint")``: top-k and top-p both judged on the whole distribution, the kept set
  their intersection. When any request of the batch sets min-p (``need_min_p_sampling``) it runs
  ``top_k_renorm_prob`` -> ``top_p_renorm_prob`` -> ``min_p_sampling_from_probs``: sequential, as
  transformers. ``batch_has_min_p=`` says which; min_p > 0 implies it. (FlashInfer thresholds by
  pivot, so ties with the k-th stay; ``--sampling-backend pytorch`` differs and is not followed here.)
- **Ollama** (ollama/ollama ``sample/samplers.go`` ``Sampler.sample`` and ``sample/transforms.go``):
  ``topK`` (a heap: exactly k) on the logits, then temperature and softmax, ``topP`` keeps until the
  running sum is strictly ``> top_p`` (an exact equality keeps one more token than transformers),
  ``minP`` keeps ``p >= max_p * min_p`` (and ``min_p == 1`` is a no-op there, as in its code).

Every rule keeps a most-likely-first prefix of the tokens (sorted by logprob, ties by id), so a cut is
a count; what is kept is renormalised at the requested temperature: softmax(logprob / T) over the kept
tokens, in every engine. Temperature 0 is greedy: the most likely token alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np

from .sampling import min_p_removes, top_k_removes, top_p_removes
from .sampling import sampled_from as transformers_sampled_from

__all__ = ["sampled_from", "kept_count", "kept_counts", "KeptCounts", "ENGINES"]

ENGINES = ("transformers", "vllm", "llama.cpp", "sglang", "ollama")


def sampled_from(logprobs, *, temperature: float = 1.0, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0,
                 engine: str = "transformers", batch_has_min_p: bool = False) -> np.ndarray:
    """Log-probabilities (V,) of the distribution `engine` samples from, -inf where a token is cut.

    Parameters
    ----------
    logprobs : array (V,)
        The model's log-probabilities (or logits: only differences matter) over the vocabulary.
    temperature, top_k, top_p, min_p :
        As the engine's request takes them; ``top_k <= 0`` (vLLM's -1 included), ``top_p = 1`` and
        ``min_p = 0`` switch a cut off.
    engine : one of ``ENGINES``
        Whose order and boundary comparisons to follow (see the module docstring for the sources).
    batch_has_min_p : bool
        SGLang only: another request of the batch set min-p, which turns its joint top-k/top-p cut into
        the sequential one.
    """
    lp = _check(logprobs, temperature, top_k, top_p, min_p, engine)
    if engine == "transformers":
        settings = SimpleNamespace(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
        with np.errstate(divide="ignore"):
            return np.log(transformers_sampled_from(lp, settings))
    order = np.argsort(-lp, kind="stable")  # most likely first, ties by id
    desc = lp[order]
    kept = 1 if temperature <= 0 else _KEPT[engine](desc, temperature, top_k, top_p, min_p, batch_has_min_p)
    scaled = desc[:kept] / (temperature if temperature > 0 else 1.0)
    out = np.full(lp.shape, -np.inf)
    out[order[:kept]] = scaled - _logsumexp(scaled)
    return out


def _check(logprobs, temperature, top_k, top_p, min_p, engine) -> np.ndarray:
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.ndim != 1 or lp.size == 0 or np.isnan(lp).any():
        raise ValueError(f"logprobs must be one position's distribution: a non-empty 1-D array without NaN, "
                         f"got shape {lp.shape}")
    if not np.isfinite(lp.max()):
        raise ValueError("logprobs has no finite value: there is no token to sample")
    if not temperature >= 0:
        raise ValueError(f"temperature must be >= 0 (0: greedy), got {temperature!r}")
    if int(top_k) != top_k:
        raise ValueError(f"top_k must be an integer (0 or less: off), got {top_k!r}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1] (1: off), got {top_p!r}")
    if not 0 <= min_p <= 1:
        raise ValueError(f"min_p must be in [0, 1] (0: off), got {min_p!r}")
    return lp


def _logsumexp(x: np.ndarray) -> float:
    top = x.max()
    return float(top + np.log(np.exp(x - top).sum()))


def _probs(scores: np.ndarray) -> np.ndarray:
    weights = np.exp(scores - scores[0])  # scores descending: the first is the largest
    return weights / weights.sum()


# -- the cuts, each on the first `n` of the descending scores; each returns the new count ----------

def _top_k_ties(scores, n: int, k: int) -> int:
    """transformers, vLLM, FlashInfer: below the k-th value goes; ties with it stay."""
    if k <= 0 or k >= n:
        return n
    return int(np.count_nonzero(~top_k_removes(scores[:n], scores[k - 1])))


def _top_k_exact(n: int, k: int) -> int:
    """llama.cpp, Ollama: exactly k after a sort."""
    return n if k <= 0 else min(n, k)


def _top_p_suffix(scores, n: int, p: float) -> int:
    """transformers, vLLM: ascending cumulative probability <= 1 - p goes (at least one token stays)."""
    if p >= 1.0:
        return n
    probs = _probs(scores[:n])
    from_least = np.cumsum(probs[::-1])[::-1]  # each token's mass with every less likely one's
    return max(1, int(np.count_nonzero(~top_p_removes(from_least, p))))


def _top_p_running(scores, n: int, p: float, strict: bool) -> int:
    """llama.cpp (``sum >= p``) and Ollama (``sum > p``): keep until the running sum reaches p."""
    if p >= 1.0:
        return n
    running = np.cumsum(_probs(scores[:n]))
    reached = running > p if strict else running >= p
    hits = np.nonzero(reached)[0]
    return int(hits[0]) + 1 if hits.size else n


def _min_p_probs(scores, n: int, m: float) -> int:
    """transformers, vLLM, SGLang, Ollama: ``p < min_p * p_max`` goes, in probabilities."""
    if m <= 0.0:
        return n
    probs = _probs(scores[:n])
    return max(1, int(np.count_nonzero(probs >= m * probs[0])))


def _min_p_logits(scores, n: int, m: float) -> int:
    """llama.cpp: ``logit >= max_logit + log(min_p)`` stays, in logits."""
    if m <= 0.0:
        return n
    return max(1, int(np.count_nonzero(~min_p_removes(scores[:n], scores[0], m))))


# -- each engine's order ---------------------------------------------------------------------------

def _vllm(desc, t, top_k, top_p, min_p, _batch) -> int:
    scores = desc / t
    n = _min_p_probs(scores, len(scores), min_p)  # on the whole distribution, before top-k and top-p
    n = _top_k_ties(scores, n, top_k)
    return _top_p_suffix(scores, n, top_p)  # on the survivors, renormalised


def _llamacpp(desc, _t, top_k, top_p, min_p, _batch) -> int:
    n = _top_k_exact(len(desc), top_k)  # every cut at T = 1: temperature comes last
    n = _top_p_running(desc, n, top_p, strict=False)
    return _min_p_logits(desc, n, min_p)


def _sglang(desc, t, top_k, top_p, min_p, batch_has_min_p) -> int:
    scores = desc / t
    if batch_has_min_p or min_p > 0:  # top_k_renorm_prob -> top_p_renorm_prob -> min_p_sampling_from_probs
        n = _top_k_ties(scores, len(scores), top_k)
        n = _top_p_suffix(scores, n, top_p)
        return _min_p_probs(scores, n, min_p)
    # joint: both judged on the whole distribution, the kept set their intersection
    return min(_top_k_ties(scores, len(scores), top_k), _top_p_suffix(scores, len(scores), top_p))


def _ollama(desc, t, top_k, top_p, min_p, _batch) -> int:
    n = _top_k_exact(len(desc), top_k)  # on the logits, before temperature
    scores = desc / t
    n = _top_p_running(scores, n, top_p, strict=True)
    return n if min_p >= 1.0 else _min_p_probs(scores, n, min_p)  # minP(ts, 1.0) returns ts unchanged


def _transformers(desc, t, top_k, top_p, min_p, _batch) -> int:
    scores = desc / t  # the comparisons of records.sampling, in its order (min-p in logits, as there)
    n = _top_k_ties(scores, len(scores), top_k)
    n = _top_p_suffix(scores, n, top_p)
    return _min_p_logits(scores, n, min_p)


def kept_count(desc: np.ndarray, *, temperature: float, top_k: int, top_p: float, min_p: float,
               engine: str = "transformers", batch_has_min_p: bool = False) -> int:
    """How many of the tokens `engine` keeps, given the logprobs sorted most likely first (`desc`):
    `sampled_from`'s cut without the sort, for callers that sweep one setting over a range (the
    explorer's bands). Arguments are not checked here; `sampled_from` checks them."""
    if temperature <= 0:
        return 1
    return _KEPT[engine](np.asarray(desc, dtype=np.float64), temperature, top_k, top_p, min_p, batch_has_min_p)


_KEPT = {"transformers": _transformers, "vllm": _vllm, "llama.cpp": _llamacpp, "sglang": _sglang, "ollama": _ollama}


# -- the same orders when only the K most likely tokens are known (a server's top K) -----------------

@dataclass(frozen=True)
class KeptCounts:
    """The kept counts an engine can reach when only the K most likely tokens are known: between `low`
    and `high` of them (1 <= low <= high <= K), and, when `more`, all K and some unknown ones too,
    of which top-k allows at most `extra` and min-p keeps only those at least `floor` likely (model p)."""

    low: int
    high: int
    more: bool
    extra: float = math.inf
    floor: float = 0.0


def kept_counts(desc, tail_weight, *, temperature: float, top_k: int, top_p: float, min_p: float,
                engine: str = "transformers", batch_has_min_p: bool = False) -> KeptCounts:
    """`kept_count` when only `desc` (the K most likely logprobs, most likely first) are known and the
    rest of the mass lies in unknown tokens each at most as likely as the last: every count the engine
    can reach for some spread of that rest lies in the answer. ``tail_weight(alpha, floor, extra)`` gives
    (low, high) of the unknown tokens' summed weight (p / p_top) ** alpha, counting only those at least
    `floor` likely and at most `extra` of them (records/sampling_bounds.py); a top-p cut over unknown
    tokens divides by a normaliser known only within those bounds."""
    desc = np.asarray(desc, dtype=np.float64)
    cuts = _Cuts(desc, tail_weight)
    start = KeptCounts(len(desc), len(desc), bool(tail_weight(1.0, 0.0, math.inf)[1] > 0))
    if temperature <= 0:
        return KeptCounts(1, 1, False)
    t = temperature
    if engine == "vllm":
        return cuts.top_p(cuts.top_k(cuts.min_p(start, min_p, t), top_k, True), top_p, t, "suffix")
    if engine == "llama.cpp":
        return cuts.min_p(cuts.top_p(cuts.top_k(start, top_k, False), top_p, 1.0, "running"), min_p, 1.0)
    if engine == "ollama":
        counts = cuts.top_p(cuts.top_k(start, top_k, False), top_p, t, "strict")
        return counts if min_p >= 1.0 else cuts.min_p(counts, min_p, t)
    if engine == "sglang" and not (batch_has_min_p or min_p > 0):
        by_k, by_p = cuts.top_k(start, top_k, True), cuts.top_p(start, top_p, t, "suffix")
        return KeptCounts(min(by_k.low, by_p.low), min(by_k.high, by_p.high), by_k.more and by_p.more, by_k.extra)
    return cuts.min_p(cuts.top_p(cuts.top_k(start, top_k, True), top_p, t, "suffix"), min_p, t)  # transformers


class _Cuts:
    """Each cut on `KeptCounts`: exact on the known tokens (every cut is monotone in how many it is
    given, so the fewest given gives the fewest kept), bounded where unknown tokens take part."""

    def __init__(self, desc: np.ndarray, tail_weight) -> None:
        self.desc, self.k, self.tail_weight = desc, len(desc), tail_weight
        self.p_top, self.p_last = math.exp(desc[0]), math.exp(desc[-1])

    def top_k(self, c: KeptCounts, k: int, ties: bool) -> KeptCounts:
        if k <= 0:
            return c
        cut = (lambda n: _top_k_ties(self.desc, n, k)) if ties else (lambda n: _top_k_exact(n, k))
        if c.more and k > self.k:
            return replace(c, low=cut(c.low), extra=min(c.extra, k - self.k))
        return KeptCounts(cut(c.low), cut(c.high), False)

    def min_p(self, c: KeptCounts, m: float, t: float) -> KeptCounts:
        if m <= 0.0:
            return c
        scores = self.desc / t
        known = _min_p_logits(scores, self.k, m)  # (p / p_top) ** (1 / t) >= m, in logits or probabilities alike
        floor = self.p_top * m ** t  # the least model probability it keeps
        more = c.more and known == self.k and floor <= self.p_last
        return KeptCounts(min(c.low, known), min(c.high, known), more, c.extra, max(c.floor, floor) if more else 0.0)

    def top_p(self, c: KeptCounts, p: float, t: float, rule: str) -> KeptCounts:
        if p >= 1.0:
            return c
        scores = self.desc / t
        if rule == "suffix":
            cut = lambda n: _top_p_suffix(scores, n, p)  # noqa: E731
        else:
            cut = lambda n: _top_p_running(scores, n, p, strict=rule == "strict")  # noqa: E731
        if not c.more:
            return KeptCounts(cut(c.low), cut(c.high), False)
        w = np.exp(scores - scores[0])  # the known tokens' weights, the top one's 1
        _, unknown_high = self.tail_weight(1.0 / t, c.floor, c.extra)
        before = np.cumsum(w) - w  # the mass more likely than each token
        most = max(1, int(np.count_nonzero(before <= p * (w.sum() + unknown_high))))
        more = most == self.k and w.sum() <= p * (w.sum() + unknown_high)
        return KeptCounts(cut(c.low), max(cut(c.high), most), more, c.extra, c.floor)
