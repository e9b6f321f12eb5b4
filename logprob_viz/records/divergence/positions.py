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

__all__ = ["LLAMA_CUTOFF", "log_softmax", "exact_rows", "interval_rows", "base_interval_rows", "top_k"]

# llama.cpp's cutoff in nats: base tokens with log p <= -16 are left out of the KL sum.
LLAMA_CUTOFF = 16.0
# Unknown mass below this is what summing a vocabulary of float64 probabilities leaves: none.
_ROUNDING = 1e-12


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
    (it is the KL of the two distributions with the unknown tokens merged into one). The list is the
    candidate's K most likely tokens, so each unknown q_j is also at most c, its smallest listed q: the
    lower end is the least that sum can be under both limits (`_capped_low`), which is tighter where
    the base puts much mass outside the candidate's list. No upper bound follows: the candidate may
    give a base token almost nothing, so kld_high is +inf unless every counted base token is known
    (then both ends are the exact value).
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
    unknown_p = np.where(counted & ~known, np.exp(base_logp), 0.0)  # (T, V)
    rest_p = unknown_p.sum(axis=-1)  # P
    rest_q = np.clip(1.0 - np.where(known, np.exp(known_lq), 0.0).sum(axis=-1), 0.0, 1.0)  # r
    low = exact_part + _capped_low(unknown_p, rest_q, _list_floor(ids, lps))
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


def _list_floor(ids: np.ndarray, lps: np.ndarray) -> np.ndarray:
    """Per row, the most an unlisted token can have: the smallest listed probability of a top-K list
    (most likely first); 1 (no limit) where nothing is listed or a listed token's id is unknown (an
    unknown id may be any token, so the unlisted ones are not bounded by the list)."""
    finite = np.isfinite(lps)
    smallest = np.where(finite, np.exp(np.where(finite, lps, 0.0)), np.inf).min(axis=-1, initial=np.inf)
    usable = finite.any(axis=-1) & ~(finite & (ids < 0)).any(axis=-1)
    return np.where(usable, np.minimum(smallest, 1.0), 1.0)


def _capped_low(p: np.ndarray, r: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """min of sum_j p_j log(p_j / q_j) over 0 <= q_j <= cap, sum_j q_j <= r, per row (p: (T, V), 0 where
    not counted). The sum falls as any q_j grows, so the minimum spends all it may: q_j = min(cap,
    p_j / lambda) (water-filling), the m largest p_j capped and the rest sharing r - m * cap in
    proportion to p. m is the first count at which the next p_j's share is within the cap. With r <= 0
    (a list whose float32 probabilities sum to 1 or more) only the cap is used: a weaker, still certain
    limit. With cap 1 it is P log(P / r), the unknown tokens merged into one (the log-sum inequality)."""
    s = -np.sort(-p, axis=-1)  # (T, V), largest first
    t, v = s.shape
    zero = np.zeros((t, 1))
    head = np.concatenate([zero, np.cumsum(s, axis=-1)], axis=-1)  # sum of the m largest: (T, V+1)
    tail = np.concatenate([np.cumsum(s[:, ::-1], axis=-1)[:, ::-1], zero], axis=-1)  # the rest's sum
    m = np.arange(v + 1)[None, :]
    nxt = np.concatenate([s, zero], axis=-1)  # the (m+1)-th largest p
    r, cap = r[:, None], cap[:, None]
    fits = nxt * (r - m * cap) <= cap * tail  # the next token's proportional share is within the cap
    fits[:, -1] = True
    mstar = np.where(r > 0, fits.argmax(axis=-1)[:, None], v)  # (T, 1); r <= 0: every token capped
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.concatenate([zero, np.cumsum(np.where(s > 0, s * np.log(s), 0.0), axis=-1)], axis=-1)
        capped = np.take_along_axis(plogp - head * np.log(cap), mstar, axis=-1)[:, 0]
        rest = np.take_along_axis(tail, mstar, axis=-1)[:, 0]
        share = (r - mstar * cap)[:, 0]
        merged = np.where(rest > 0, rest * (np.log(rest) - np.log(share)), 0.0)
    return capped + merged


def _listed_rank(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """1-based place of ``wanted`` in each row's list (most likely first); 0 where not listed (unknown)."""
    if ids.shape[1] == 0:
        return np.zeros(len(wanted), dtype=np.int64)
    hit = ids == wanted[:, None]
    return np.where(hit.any(axis=-1), hit.argmax(axis=-1) + 1, 0)


def base_interval_rows(cand_logp: np.ndarray, chosen, base_logprob, base_ids, base_logprobs,
                       cutoff: float | None, k: int, cand_top_ids=None) -> dict:
    """The per-position numbers where the candidate gives its whole distribution (T, V) and the base only
    the chosen token's logprob and its listed top-K (ids (T, K'), -1 where unknown; logprobs (T, K')).

    The known base tokens S give exact terms. The unknown base mass R = 1 - sum_S p lies on the other
    tokens, each at most c (the smallest listed p, or R). Over every such spread:
      low:  the log-sum inequality, R log(R / Q) with Q = sum_{j not in S} q_j (the unknown tokens merged);
      high: p log(p / q) is convex, so its largest sum is at a corner of {0 <= p_j <= c, sum p_j = R}: c on
            the tokens the candidate finds least likely, the rest of R on the next (an exchange argument).
    With a cutoff, an unknown token counts only when p_j > e^-cutoff, so its term lies between
    min(0, min over p in (e^-cutoff, c] of p log(p / q_j)) and max(0, its corner value); when c <= e^-cutoff
    no unknown token counts and the value is exact.
    """
    chosen = np.asarray(chosen, dtype=np.int64)
    rows = np.arange(len(chosen))
    ids = np.asarray(base_ids, dtype=np.int64).reshape(len(chosen), -1)
    lps = np.asarray(base_logprobs, dtype=np.float64).reshape(len(chosen), -1)
    listed = ids >= 0
    known_lp = np.full(cand_logp.shape, np.nan)
    known_lp[np.nonzero(listed)[0], ids[listed]] = lps[listed]
    base_lp = np.asarray(base_logprob, dtype=np.float64)
    known_lp[rows, chosen] = base_lp
    known = ~np.isnan(known_lp)
    lp0 = np.where(known, known_lp, -np.inf)
    exact_part = _kl_terms(lp0, cand_logp, known & _counted(lp0, cutoff)).sum(axis=-1)
    p_known = np.where(known, np.exp(lp0), 0.0)
    rest = np.clip(1.0 - p_known.sum(axis=-1), 0.0, 1.0)  # R
    listed_min = np.where(listed, np.exp(np.where(listed, lps, 0.0)), np.inf).min(axis=-1, initial=np.inf)
    cap = np.minimum(listed_min, rest)  # c
    q = np.where(known, np.inf, np.exp(cand_logp))  # the unknown tokens' q (known ones last once sorted)
    low, high = _unknown_base_bounds(q, rest, cap, cutoff)
    cand_top = cand_logp.argmax(axis=-1)
    base_top = np.where(listed[:, 0], ids[:, 0], -1) if ids.shape[1] else np.full(len(chosen), -1)
    alt_c_ids, alt_c_lp = _alternatives(cand_logp, k, cand_top_ids)
    of_base_top = cand_logp[rows, np.maximum(base_top, 0)]
    return {"kld_low": exact_part + low, "kld_high": exact_part + high, "base_logprob": base_lp,
            "cand_logprob": cand_logp[rows, chosen], "delta_p": np.exp(cand_logp[rows, chosen]) - np.exp(base_lp),
            "base_top_id": base_top, "base_top_logprob": np.where(base_top >= 0, lps[:, 0] if lps.shape[1] else 0,
                                                                  np.nan),
            "cand_top_id": cand_top, "cand_top_logprob": cand_logp[rows, cand_top],
            "same_top": np.where(base_top >= 0, (base_top == cand_top).astype(np.float64), np.nan),
            "base_top_rank": np.where(base_top >= 0, (cand_logp > of_base_top[:, None]).sum(axis=-1) + 1, 0),
            "base_alt_ids": ids[:, :k], "base_alt_logprobs": np.where(listed, lps, -np.inf)[:, :k],
            "cand_alt_ids": alt_c_ids, "cand_alt_logprobs": alt_c_lp}


def _unknown_base_bounds(q: np.ndarray, rest: np.ndarray, cap: np.ndarray, cutoff) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the unknown base tokens' part of the KL, per row; q: (T, V), inf where known."""
    floor = 0.0 if cutoff is None else float(np.exp(-cutoff))
    unknown = np.isfinite(q)
    q_rest = np.where(unknown, q, 0.0).sum(axis=-1)  # Q
    with np.errstate(divide="ignore", invalid="ignore"):
        if cutoff is None:
            low = np.where(rest > 0, rest * (np.log(rest) - np.log(q_rest)), 0.0)
        else:  # each counted token's term is at least its minimum over (floor, cap], and a token may not count
            best = np.clip(q / np.e, floor, cap[:, None])  # argmin of p log(p / q) on the interval
            low = np.where(unknown, np.minimum(0.0, best * (np.log(best) - np.log(q))), 0.0).sum(axis=-1)
        ordered = np.sort(q, axis=-1)  # the least likely tokens under the candidate first
        full = np.floor(np.where(cap > 0, rest / cap, 0.0)).astype(np.int64)  # tokens that get the whole cap
        place = np.arange(q.shape[-1])[None, :]
        mass = np.where(place < full[:, None], cap[:, None],
                        np.where(place == full[:, None], (rest - full * cap)[:, None], 0.0))
        terms = np.where(mass > floor, mass * (np.log(mass) - np.log(ordered)), 0.0)
        high = np.maximum(terms, 0.0 if cutoff is not None else -np.inf).sum(axis=-1)
    # no unknown token can count: none left, all below the cutoff, or no mass left beyond float64 rounding
    exact = (cap <= floor) | (rest <= _ROUNDING) | ~unknown.any(axis=-1)
    return np.where(exact, 0.0, low), np.where(exact, 0.0, high)
