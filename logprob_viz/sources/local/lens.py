"""The logit lens: what a causal LM would predict if it stopped after each of its blocks.

`lens(runner, text)` runs one forward pass with a hook on every decoder block. Each hook reads
its block's output through the model's final norm and output embedding, chunk by chunk, and
keeps only the summary a view needs (the actual next token's logprob, rank, the entropy and the
top-K), so memory is O(layers x tokens x K), never O(layers x tokens x vocab). Row ``l`` is the
read-out after block ``l``; the final block's row is the model's own output (`Lens.trace`).
`Lens.detail(position)` gives one token's per-layer details, recomputing them when more
alternatives are asked for than were kept; the view asks the kernel for it on long texts.
"""

from __future__ import annotations

import functools
import logging
import time
import weakref

import numpy as np

from ...records.lens import Lens, check_top_logprobs
from ...records.tokens import VocabTexts, token_bytes_table
from ...records.trace import Trace
from ...records.trace_fields import empty
from ..request import is_int
from .lens_readout import Readout, flush_denormals, summarize

__all__ = ["lens", "find_parts"]

log = logging.getLogger(__name__)

# Positions read out per log_softmax: bounds the temporary to CHUNK x vocab floats per layer.
CHUNK = 256

# Where common architectures keep their decoder blocks and final norm, below the base model
# (`model.base_model`: LlamaModel, GPT2Model, GPTNeoXModel, ...). First match wins.
_BLOCK_NAMES = ("layers", "h", "blocks", "block", "decoder.layers")
_NORM_NAMES = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f", "decoder.final_layer_norm")

_vocabs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # tokenizer -> VocabTexts


class _Stop(Exception):
    """Raised by the last hook: the rest of the forward pass (the full-vocabulary logits) is not needed."""


def _get(module, dotted: str):
    for name in dotted.split("."):
        module = getattr(module, name, None)
        if module is None:
            return None
    return module


def find_parts(model):
    """(blocks, final_norm, output_embedding) of a transformers causal LM, or a ValueError naming what is missing."""
    import torch

    base = getattr(model, "base_model", None) or model
    blocks = next((b for n in _BLOCK_NAMES if isinstance(b := _get(base, n), torch.nn.ModuleList)), None)
    norm = next((m for n in _NORM_NAMES if isinstance(m := _get(base, n), torch.nn.Module)), None)
    getter = getattr(model, "get_output_embeddings", None)
    unembed = getter() if callable(getter) else None
    missing = []
    where = type(base).__name__
    if blocks is None or len(blocks) == 0:
        missing.append(f"the decoder blocks (looked for a ModuleList at {where}.{{{', '.join(_BLOCK_NAMES)}}})")
    if norm is None:
        missing.append(f"the final norm (looked for {where}.{{{', '.join(_NORM_NAMES)}}})")
    if unembed is None:
        missing.append("the output embedding (model.get_output_embeddings() returned None)")
    if missing:
        raise ValueError(
            f"the logit lens cannot read {type(model).__name__}: could not find " + "; ".join(missing)
            + ". It needs a causal LM whose blocks, final norm and output embedding it can find."
        )
    return blocks, norm, unembed


def _block_output(output):
    # Decoder blocks return a tensor (transformers 5) or a tuple whose first item is the hidden state.
    return output[0] if isinstance(output, (tuple, list)) else output


def _run(model, ids: list[int], rows: list[int], k: int, positions=None) -> dict[int, dict]:
    """One forward pass over `ids`; per block in `rows`, the summaries of the positions scored.

    positions: which predictions to read (indices into ids[1:]); None: all of them.
    The final block is always read (the KL is to its distributions), also when not in rows.
    Returns {block: {name: numpy array}}.

    The hooks keep each block's hidden states at those positions ([T, d] per block, as
    ``output_hidden_states`` would) and stop the pass after the last block; the read-outs then
    go chunk by chunk, the final block first, so that every block's KL to the final
    distribution is computed without a second pass or a [layers, T, vocab] array.
    """
    import torch

    blocks, norm, unembed = find_parts(model)
    readout = Readout(model, norm, unembed)
    rows = sorted(set(rows) | {len(blocks) - 1})
    device = next(model.parameters()).device
    input_ids = torch.tensor([ids], device=device)  # (1, N)
    chosen = input_ids[0, 1:]  # (N-1,): the token each position predicts
    where = torch.arange(len(chosen), device=device) if positions is None else torch.as_tensor(positions, device=device)
    hidden: dict[int, torch.Tensor] = {}
    last = max(rows)

    def hook_for(b: int):
        def hook(_module, _inputs, output):
            hidden[b] = _block_output(output)[0, :-1][where]  # (T, d): each position's state, predicting the next
            if b == last:
                raise _Stop

        return hook

    handles = [blocks[b].register_forward_hook(hook_for(b)) for b in rows]
    try:
        with torch.inference_mode():
            model(input_ids=input_ids, use_cache=False)
    except _Stop:
        pass
    finally:
        for h in handles:
            h.remove()
    results: dict[int, list[dict]] = {b: [] for b in rows}
    with torch.inference_mode(), flush_denormals():
        for s in range(0, len(where), CHUNK):
            at = where[s : s + CHUNK]
            logits = readout(hidden[last][s : s + CHUNK])
            work = torch.empty(logits.shape, dtype=torch.float32, device=device)  # (T, V) scratch
            part, final = summarize(logits, chosen[at], k, work)
            results[last].append(part)
            for b in rows[:-1]:
                results[b].append(summarize(readout(hidden[b][s : s + CHUNK]), chosen[at], k, work, final)[0])
    out = {}
    for b, parts in results.items():
        if parts:
            # one device -> host copy per field and block
            out[b] = {name: torch.cat([p[name] for p in parts]).cpu().numpy() for name in parts[0]}
        else:  # a one-token text: nothing to predict
            out[b] = {name: empty(name, 0, k) for name in ("logprobs", "ranks", "entropy", "top_logprobs", "top_ids")}
        out[b].setdefault("kl_to_final", np.zeros(0, np.float32))
    return out


def _vocab(runner) -> VocabTexts:
    """The runner's table of token texts (one per tokenizer, built once when it has none)."""
    vocab = getattr(runner, "vocab", None)
    if isinstance(vocab, VocabTexts):
        return vocab
    vocab = _vocabs.get(runner.tokenizer)
    if vocab is None:
        vocab = _vocabs[runner.tokenizer] = VocabTexts(token_bytes_table(runner.tokenizer))
    return vocab


def _check_layers(layers, n_blocks: int) -> list[int]:
    if layers is None:
        return list(range(n_blocks))
    if is_int(layers):
        layers = [layers]
    if isinstance(layers, slice):
        layers = range(n_blocks)[layers]
    try:
        picked = list(layers)
    except TypeError:
        kind = type(layers).__name__
        raise TypeError(f"layers must be None, an int, a slice or a list of ints, got {kind}") from None
    out = set()
    for b in picked:
        if not is_int(b) or not -n_blocks <= b < n_blocks:
            raise ValueError(
                f"layers must be block indices between 0 and {n_blocks - 1} (or negative from the end), got {b!r}"
            )
        out.add(int(b) % n_blocks)
    if not out:
        raise ValueError("layers is empty: pick at least one block, or None for all of them")
    return sorted(out)


def _ids_of(runner, text_or_trace) -> tuple[list[int], dict]:
    if isinstance(text_or_trace, Trace):
        ids = [int(i) for i in text_or_trace.token_ids]
        if not ids or min(ids) < 0:
            raise ValueError(
                "this trace has no token ids for every token (e.g. one read from a server); "
                "pass its text instead: lens(runner, trace.text)"
            )
        # the trace's own split: its completion stays a completion in the lens's trace (views agree)
        return ids, {"prompt": text_or_trace.text, "prompt_len": int(text_or_trace.prompt_len)}
    if not isinstance(text_or_trace, str):
        raise TypeError(f"the lens reads a str or a logprob_viz.Trace, got {type(text_or_trace).__name__}")
    ids = list(runner.tokenizer(text_or_trace)["input_ids"])
    if not ids:
        raise ValueError("the text is empty: give at least one character")
    return ids, {"prompt": text_or_trace}


def lens(runner, text_or_trace, *, top_logprobs: int = 5, layers=None) -> Lens:
    """Per-layer next-token predictions (the logit lens) of a text under the runner's model.

    Parameters
    ----------
    runner : TransformersRunner
        A local runner (``lv.load()``): its ``model`` and ``tokenizer`` are used.
    text_or_trace : str or Trace
        The text to read, or a trace whose token ids are followed exactly (e.g. a generation).
    top_logprobs : int
        Alternatives kept per layer and token, 0..20.
    layers : None, int, slice or list of ints
        The blocks to read out (0-based; negative from the end); None: all of them.
    """
    import torch

    model = getattr(runner, "model", None)
    if not isinstance(model, torch.nn.Module) or getattr(runner, "tokenizer", None) is None:
        raise TypeError(
            f"the logit lens needs a local runner holding the model (lv.load(...)), got {type(runner).__name__}; "
            "a server's responses carry no hidden states"
        )
    blocks, _norm, unembed = find_parts(model)
    k = check_top_logprobs(top_logprobs)
    rows = _check_layers(layers, len(blocks))
    ids, meta_in = _ids_of(runner, text_or_trace)
    vocab_size = int(unembed.weight.shape[0])
    if max(ids) >= vocab_size:
        raise ValueError(
            f"token id {max(ids)} is outside the model's vocabulary of {vocab_size}: "
            "was the trace made with another model? Pass its text instead"
        )
    limit = getattr(model.config, "max_position_embeddings", None)
    if limit is not None and len(ids) > limit:
        name = getattr(runner, "name", type(model).__name__)
        raise ValueError(f"the text has {len(ids)} tokens, more than {name}'s context of {limit}; shorten it")
    started = time.perf_counter()
    final = len(blocks) - 1
    got = _run(model, ids, sorted(set(rows) | {final}), k)  # the final block always: it is the model's own output
    meta = {
        "source": "transformers",
        "mode": "lens",
        "model": getattr(runner, "name", type(model).__name__),
        "device": str(next(model.parameters()).device),
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "top_logprobs": k,
        "seconds": round(time.perf_counter() - started, 4),
        **meta_in,
    }
    rerun = functools.partial(_run, runner.model)
    return Lens(ids, rows, got, final, k, len(blocks), meta, vocab=_vocab(runner), rerun=rerun)
