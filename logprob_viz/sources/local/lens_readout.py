"""The logit lens's read-out: one block's hidden states -> the summary the lens keeps of them.

`Readout` applies the final norm and the output embedding (and the model's own logit
post-processing); `summarize` turns a chunk of logits into the actual token's logprob and rank,
the entropy, the top-K and the KL to the final block, without writing a vocabulary-sized array
per layer beyond one reused scratch.

Where the time goes (SmolLM2-135M on a CPU core, 128 positions, per block): the read-out's matmul
is about 60 ms; the summary's passes over the (T, V) logits were 35-40 ms, exp the largest of them.
They are cheaper by (1) cutting exp's arguments at EXP_FLOOR (below it torch's exp takes a slow
path, and the middle layers' logits reach 150 below their maximum); (2) flushing denormal floats
to zero; (3) summarizing a few rows at a time, their logits and scratch in cache between the
passes, and the rank's comparison over the whole vocabulary only where the token is not among the
top K. (The KL's p_final . z was once taken from the output embedding's linearity, (p_final W) . n;
that product costs as much as a read-out, more than the 29 passes over cached rows it saved:
2.5 % of the lens's CPU time, measured side by side on 512 tokens.)
"""

from __future__ import annotations

import contextlib

__all__ = ["Readout", "summarize", "flush_denormals", "top_k"]

# Columns per block for the top-K search: the K best blocks by their maxima hold the top K.
TOPK_BLOCK = 64

# Rows summarized at a time on a CPU: the (ROWS, V) float32 slices of the logits and of the
# scratch (2 x 16 x 49k x 4 B = 6 MB here) stay in cache between the passes below, so only the
# first pass reads memory (4 to 128 rows measured: 16 the best, by a little). On a GPU, where
# every pass is one kernel launch, all rows at once.
CPU_ROWS = 16

# exp(-87) = 1.6e-38, float32's smallest normals: a term that small changes no sum here (each is at
# least 1, exp(0) at the row's maximum), but torch's CPU exp is 10-40x slower on every vector of
# 16 that holds an argument below about -87.3 (its underflow path), and the read-outs of the
# middle layers span -100 to -150 below their maximum. So arguments are cut there.
EXP_FLOOR = -87.0


def top_k(z, k: int):
    """(values, indices, row max) of the k largest of each row of z (T, V), exactly as torch.topk.

    torch.topk over 49k columns costs a sixth of the read-out's matmul; the top K all lie in the
    K blocks of TOPK_BLOCK columns with the largest maxima, so one max pass over the blocks and a
    top-K among K x TOPK_BLOCK candidates give the same answer for a fraction of that.
    """
    import torch

    n_rows, vocab = z.shape
    n_blocks = vocab // TOPK_BLOCK
    if k == 0 or n_blocks <= 4 * k:
        top = torch.topk(z, k, dim=-1)
        return top.values, top.indices, z.amax(-1)
    maxes = z[:, : n_blocks * TOPK_BLOCK].view(n_rows, n_blocks, TOPK_BLOCK).amax(-1)  # (T, blocks)
    best = maxes.topk(k, dim=-1).indices  # (T, K)
    columns = torch.arange(TOPK_BLOCK, device=z.device)
    candidates = (best[:, :, None] * TOPK_BLOCK + columns).view(n_rows, k * TOPK_BLOCK)
    row_max = maxes.amax(-1)
    if vocab > n_blocks * TOPK_BLOCK:  # the columns after the last whole block are candidates too
        tail = torch.arange(n_blocks * TOPK_BLOCK, vocab, device=z.device).expand(n_rows, -1)
        candidates = torch.cat([candidates, tail], dim=1)
        row_max = torch.maximum(row_max, z[:, n_blocks * TOPK_BLOCK :].amax(-1))
    top = z.gather(1, candidates).topk(k, dim=-1)
    return top.values, candidates.gather(1, top.indices), row_max


def summarize(logits, chosen, k: int, work, final=None) -> tuple[dict, tuple]:
    """What the lens keeps of T distributions. logits (T, V); chosen (T,) the token that followed.

    work: a (T, V) float32 scratch tensor, reused by every call (a fresh 50 MB tensor per
    operation costs more in page faults than the operation). final: (p, entropy) of the final
    block's distributions at the same positions, for the KL to them; None when these logits are
    the final block's own, whose (p, entropy) are then returned. Nothing of size V is written but
    `work` (and the final block's p): log p = z - lse is never materialized.
    """
    import torch

    z = logits.float()  # (T, V)
    rows = CPU_ROWS if z.device.type == "cpu" else len(z)
    p_final = torch.empty_like(z) if final is None else None  # the final block's p, for the others' KL
    parts = []
    for s in range(0, len(z), rows):
        cut = slice(s, s + rows)
        if final is None:
            parts.append(_summarize_rows(z[cut], chosen[cut], k, p_final[cut]))
        else:
            parts.append(_summarize_rows(z[cut], chosen[cut], k, work[cut], final[0][cut], final[1][cut]))
    summary = {name: torch.cat([part[name] for part in parts]) for name in parts[0]}
    return summary, (p_final, summary["entropy"]) if final is None else final


def _summarize_rows(z, chosen, k: int, work, p_final=None, h_final=None) -> dict:
    """`summarize` of a few rows: z (R, V) float32; work (R, V) scratch, or the final block's p to fill."""
    import torch

    top_values, top_ids, m = top_k(z, k)  # m: (R,) row max
    # exp of z - max, cut at EXP_FLOOR: below it torch's exp takes a slow path (40x here)
    e = torch.sub(z, m[:, None], out=work).clamp_(min=EXP_FLOOR).exp_()  # (R, V)
    s = e.sum(-1)
    lse = m + s.log()  # (R,) log-sum-exp
    if h_final is None:  # the final block: p (left in `work`) for the other blocks' KL, and KL 0 to itself
        p = e.div_(s[:, None])
        entropy = lse - (p * z).sum(-1)  # H = lse - sum p z
        kl = torch.zeros_like(entropy)
    else:
        entropy = lse - e.mul_(z).sum(-1) / s
        final_dot = torch.mul(p_final, z, out=work).sum(-1)
        # KL(final || this) = sum p_f log p_f - sum p_f (z - lse) = lse - p_f . z - H_f
        kl = (lse - final_dot - h_final).clamp_(min=0)
    chosen_z = z.gather(-1, chosen[:, None])[:, 0]  # (R,)
    # 1-based rank: a token among the top-K has its place there (as the runner counts it); only
    # the others need a comparison over the whole vocabulary (counted in float: exact below 2^24).
    hit = top_ids == chosen[:, None]  # (R, K)
    found = hit.any(-1)
    ranks = torch.where(found, hit.int().argmax(-1) + 1, 0).int()
    if not found.all():  # (these few rows at once: picking out the missing ones would copy them)
        scratch = work if h_final is not None else torch.empty_like(z)  # (the final block's work holds its p)
        above = torch.gt(z, chosen_z[:, None], out=scratch).sum(-1).int() + 1
        ranks = torch.where(found, ranks, above)
    return {
        "logprobs": chosen_z - lse,
        "ranks": ranks,
        "entropy": entropy,
        "top_logprobs": top_values - lse[:, None],
        "top_ids": top_ids.int(),
        "kl_to_final": kl,
    }


def _flushing() -> bool:
    """Whether this thread flushes denormal floats to zero now (torch has a setter, no getter)."""
    import torch

    return float(torch.tensor([1e-39], dtype=torch.float32)[0] * 2) == 0.0


@contextlib.contextmanager
def flush_denormals():
    """Flush denormal floats to zero during the read-outs; the thread's setting as it was afterwards.

    exp(z - max) falls below float32's smallest normal (1.2e-38) for up to 1 % of the vocabulary
    in the middle layers of this model, and each operation on a denormal takes a slow path on x86
    CPUs. Terms that small change no sum here (each sum is at least 1), so the numbers stay.
    """
    import torch

    before = _flushing()
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(before)


class Readout:
    """Block output -> final norm -> output embedding (-> the model's own logit post-processing)."""

    def __init__(self, model, norm, unembed):
        self.norm, self.unembed = norm, unembed
        # Some models change the logits after the output embedding; the lens must do the same so
        # its last row is the model's output: Gemma 2's soft-capping, Cohere's logit scale.
        self.softcap = getattr(model.config, "final_logit_softcapping", None)
        self.scale = getattr(model.config, "logit_scale", None)

    def logits(self, normed):  # (T, d) normed -> (T, V)
        import torch

        logits = self.unembed(normed)
        if self.scale is not None:
            logits = logits * self.scale
        if self.softcap:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    def __call__(self, hidden):  # (T, d) -> (T, V)
        return self.logits(self.norm(hidden))
