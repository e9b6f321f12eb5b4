"""Per-position numbers of two next-token distributions (base p, candidate q) over the same token ids,
by llama.cpp's definitions (tools/perplexity/perplexity.cpp, ``log_softmax(..., kl_divergence_result &)``).

What llama.cpp computes for each scored position, quoted:

    if (p_log_base > -16.f) {
        const float p_base = expf(p_log_base);
        sum += p_base * (p_log_base - logits[i] + max_logit);   // p * (log p - log q)
    }
    ...
    if (imax == imax_base) ++kld.n_same_top;                    // first index of the maximum, each side
    const float p_diff = p - p_base;                            // q(y) - p(y), y the actual next token

So KL(base || candidate) in nats is summed over the base tokens whose log-probability is above -16
(an absolute cutoff, not relative to the top), which drops at most V * e^-16 of the base's mass per
position; ``cutoff=None`` is the exact full sum. Everything here is float64 (llama.cpp uses float32 per
term and double sums), over a block of T positions with the whole vocabulary V, so a caller keeps a
block at a time and only O(T * K) leaves this module: no T x V array is kept.

Where the candidate gives only its top-K (a server), KL cannot be exact: `interval_rows` gives a range
that certainly holds it (see there). Δp and same-top stay exact whenever the tokens they need are known.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LLAMA_CUTOFF", "log_softmax", "exact_rows", "interval_rows", "top_k"]

# llama.cpp's cutoff in nats: base tokens with log p <= -16 are left out of the KL sum.
LLAMA_CUTOFF = 16.0


def log_softmax(logits) -> np.ndarray:
    """Log-probabilities of each row of ``logits`` (T, V), in float64."""
    x = np.asarray(logits, dtype=np.float64)
    top = x.max(axis=-1, keepdims=True)
    shifted = x - top
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def top_k(logp: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k most likely ids of each row and their logprobs, most likely first: (T, k) each."""
    k = min(k, logp.shape[-1])
    if k <= 0:
        return np.zeros((logp.shape[0], 0), dtype=np.int64), np.zeros((logp.shape[0], 0))
    ids = np.argpartition(-logp, k - 1, axis=-1)[:, :k]
    values = np.take_along_axis(logp, ids, axis=-1)
    order = np.argsort(-values, axis=-1, kind="stable")
    ids = np.take_along_axis(ids, order, axis=-1)
    return ids, np.take_along_axis(values, order, axis=-1)


def _counted(base_logp: np.ndarray, cutoff: float | None) -> np.ndarray:
    """The base tokens the KL sum runs over: log p > -cutoff (llama.cpp), or every token with p > 0."""
    if cutoff is None:
        return base_logp > -np.inf  # 0 * log 0 is 0: a token the base never gives adds nothing
    return base_logp > -float(cutoff)


def _kl_terms(base_logp: np.ndarray, cand_logp: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """p * (log p - log q) where counted, else 0: (T, V)."""
    with np.errstate(invalid="ignore", over="ignore"):
        terms = np.exp(base_logp) * (base_logp - cand_logp)
    return np.where(counted, terms, 0.0)


def _alternatives(logp: np.ndarray, k: int, ids) -> tuple[np.ndarray, np.ndarray]:
    """The k most likely of each row: found here, or ``ids`` (T, k) a caller found faster (torch.topk)."""
    if ids is None:
        return top_k(logp, k)
    ids = np.asarray(ids, dtype=np.int64)
    return ids, np.take_along_axis(logp, ids, axis=-1)


def _common(base_logp: np.ndarray, chosen: np.ndarray, k: int, top_ids=None) -> dict:
    """What needs only the base: its top token, the actual token's logprob, its alternatives."""
    rows = np.arange(len(chosen))
    base_top = base_logp.argmax(axis=-1)  # the first maximum, as llama.cpp's `p_log_base > max` scan
    alt_ids, alt_lp = _alternatives(base_logp, k, top_ids)
    return {"base_logprob": base_logp[rows, chosen], "base_top_id": base_top,
            "base_top_logprob": base_logp[rows, base_top], "base_alt_ids": alt_ids, "base_alt_logprobs": alt_lp}


def exact_rows(base_logp: np.ndarray, cand_logp: np.ndarray, chosen, cutoff: float | None, k: int,
               top_ids: tuple = (None, None)) -> dict:
    """Every per-position number of T positions where both sides give their whole distribution.

    base_logp, cand_logp: (T, V) float64 log-probabilities; chosen: (T,) the token that followed;
    top_ids: each side's k most likely ids (T, k) when the caller has them (else found here).
    Returns (T,) arrays (and (T, K) alternatives); ``kld_low == kld_high``: the value is exact.
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    rows = np.arange(len(chosen))
    out = _common(base_logp, chosen, k, top_ids[0])
    kld = _kl_terms(base_logp, cand_logp, _counted(base_logp, cutoff)).sum(axis=-1)
    cand_top = cand_logp.argmax(axis=-1)
    cand_lp = cand_logp[rows, chosen]
    # the candidate's rank of the base's top token: 1 + how many tokens the candidate puts above it
    of_base_top = cand_logp[rows, out["base_top_id"]]
    alt_ids, alt_lp = _alternatives(cand_logp, k, top_ids[1])
    out.update(kld_low=kld, kld_high=kld.copy(), cand_logprob=cand_lp,
               delta_p=np.exp(cand_lp) - np.exp(out["base_logprob"]),
               cand_top_id=cand_top, cand_top_logprob=cand_logp[rows, cand_top],
               same_top=(cand_top == out["base_top_id"]).astype(np.float64),
               base_top_rank=(cand_logp > of_base_top[:, None]).sum(axis=-1) + 1,
               cand_alt_ids=alt_ids, cand_alt_logprobs=alt_lp)
    return out


def interval_rows(base_logp: np.ndarray, chosen, cand_logprob, cand_ids, cand_logprobs,
                  cutoff: float | None, k: int, base_top_ids=None) -> dict:
    """The per-position numbers where the base gives its whole distribution and the candidate only the
    chosen token's logprob and a few alternatives (ids (T, K'), -1 where unknown; logprobs (T, K')).

    KL is a range [kld_low, kld_high] that certainly holds it. Split the counted base tokens C into
    those whose q is known (S) and the rest. The known terms are exact. For the rest, whatever the
    candidate does with its unknown mass r = 1 - sum_S q, the log-sum inequality (Gibbs) gives
        sum_{C\\S} p_j log(p_j / q_j) >= P log(P / r),   P = sum_{C\\S} p_j,   since sum_{C\\S} q_j <= r
    (it is the KL of the two distributions with the unknown tokens merged into one). No upper bound
    follows: the candidate may give a base token almost nothing, so kld_high is +inf unless every
    counted base token is known (then both ends are the exact value).
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    rows = np.arange(len(chosen))
    out = _common(base_logp, chosen, k, base_top_ids)
    known_lq = np.full(base_logp.shape, np.nan)
    ids = np.asarray(cand_ids, dtype=np.int64).reshape(len(chosen), -1)
    lps = np.asarray(cand_logprobs, dtype=np.float64).reshape(len(chosen), -1)
    listed = ids >= 0
    known_lq[np.nonzero(listed)[0], ids[listed]] = lps[listed]
    cand_lp = np.asarray(cand_logprob, dtype=np.float64)
    known_lq[rows, chosen] = cand_lp
    known = ~np.isnan(known_lq)
    counted = _counted(base_logp, cutoff)
    exact_part = _kl_terms(base_logp, np.where(known, known_lq, 0.0), counted & known).sum(axis=-1)
    rest_p = np.where(counted & ~known, np.exp(base_logp), 0.0).sum(axis=-1)  # P
    rest_q = np.clip(1.0 - np.where(known, np.exp(known_lq), 0.0).sum(axis=-1), 0.0, 1.0)  # r
    with np.errstate(divide="ignore", invalid="ignore"):
        merged = np.where(rest_p > 0, rest_p * (np.log(rest_p) - np.log(rest_q)), 0.0)
    low = exact_part + merged
    cand_top, cand_top_lp = np.full(len(chosen), -1), np.full(len(chosen), np.nan)
    if ids.shape[1]:  # a list is most likely first: its first token is the candidate's top
        cand_top, cand_top_lp = np.where(listed[:, 0], ids[:, 0], -1), np.where(listed[:, 0], lps[:, 0], np.nan)
    out.update(kld_low=low, kld_high=np.where(rest_p > 0, np.inf, low), cand_logprob=cand_lp,
               delta_p=np.exp(cand_lp) - np.exp(out["base_logprob"]),
               cand_top_id=cand_top, cand_top_logprob=cand_top_lp,
               same_top=np.where(cand_top >= 0, (cand_top == out["base_top_id"]).astype(np.float64), np.nan),
               base_top_rank=_listed_rank(ids, out["base_top_id"]),
               cand_alt_ids=ids[:, :k], cand_alt_logprobs=np.where(listed, lps, -np.inf)[:, :k])
    return out


def _listed_rank(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """1-based place of ``wanted`` in each row's list (most likely first); 0 where not listed (unknown)."""
    if ids.shape[1] == 0:
        return np.zeros(len(wanted), dtype=np.int64)
    hit = ids == wanted[:, None]
    return np.where(hit.any(axis=-1), hit.argmax(axis=-1) + 1, 0)
