"""``runner.choose`` on the local runner: every option scored after its prompt, the prompt computed once.

Each prompt becomes ONE row of a forward pass: its tokens, then every option's tokens one after
the other (packed). A 4-D attention mask lets an option's tokens see the prompt and the earlier
tokens of the same option, never another option's, and their position ids continue the
prompt's, so each option is scored exactly as ``prompt + option`` alone would be; the prompt's
tokens go through the model once for all N options. Rows are grouped into batches of at most
``batch_tokens`` padded tokens as `batch.score_batch` groups texts (sorted by length, bounded
logits). Only O(K) per token leaves the device (`distribution.summarize_rows`).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ...records.choices import Choices, check_length
from ..choose import ChoiceInput, choice_inputs, choices_of, fill_pairs, input_meta, mark_straddle
from ..engine import ModelEngine
from ..progress import Progress
from .batch import check_budget, length_batches, pad_id, split_rows
from .distribution import summarize_rows, to_host
from .recording import Recorder

__all__ = ["choose"]


def choose(engine: ModelEngine, prompt=None, options=None, *, messages=None, top_logprobs: int = 5, length: str = "sum",
           gold=None, batch_tokens: int | None = None, progress: bool = True,
           strict: bool = False) -> Choices:
    """See `TransformersRunner.choose`."""
    k = engine.check_top_logprobs(top_logprobs)
    length = check_length(length)
    inputs, options, single = choice_inputs(prompt, messages, options)
    for i, item in enumerate(inputs):
        _tokenize(engine, item, "" if single else f"prompt {i} of the list: ")
    lengths = [len(c.pairs[0].context) + sum(len(p.option) for p in c.pairs) for c in inputs]
    started = time.perf_counter()
    traces: list = [None] * len(inputs)
    bar = Progress(bool(progress), len(inputs), unit="prompt", desc="choosing")
    try:
        for batch in length_batches(lengths, check_budget(engine, batch_tokens)):
            for r, row in zip(batch, _score_packed(engine, [inputs[r] for r in batch], k), strict=True):
                traces[r] = row
            bar.update_to(sum(t is not None for t in traces))
    finally:
        bar.close()
    meta = {**engine.trace_meta(k), "mode": "choose", "seconds": round(time.perf_counter() - started, 4)}
    return choices_of(inputs, options, traces, length=length, gold=gold, single=single, meta=meta, strict=strict)


def _tokenize(engine: ModelEngine, item: ChoiceInput, where: str) -> None:
    """Fill `item`'s text and pairs with the model's tokenizer (the chat template for messages)."""
    tokenizer = engine.tokenizer
    if "messages" in item.item:
        if getattr(tokenizer, "chat_template", None) is None:
            raise ValueError(f"{where}{engine.name} has no chat template; pass the prompt as text instead of messages")
        item.text = tokenizer.apply_chat_template(item.item["messages"], tokenize=False, add_generation_prompt=True)

        def encode(s):
            return tokenizer(s, add_special_tokens=False)["input_ids"]
    else:
        item.text = item.item["text"]

        def encode(s):
            return tokenizer(s)["input_ids"]  # as runner.score encodes a text
    fill_pairs(item, encode, where)
    longest = len(item.pairs[0].context) + max(len(p.option) for p in item.pairs)
    limit = getattr(engine.model.config, "max_position_embeddings", None)
    if limit is not None and longest > limit:
        raise ValueError(f"{where}the prompt and its longest option are {longest} tokens, more than {engine.name}'s "
                         f"context of {limit}; shorten the prompt")


def _packed_rows(inputs: list[ChoiceInput], device, pad: int):
    """(input_ids, position_ids, 4-D additive mask, segment starts) of a batch of packed rows."""
    rows, positions, segments = [], [], []
    for item in inputs:
        n_ctx = len(item.pairs[0].context)
        ids, pos, seg = list(item.pairs[0].context), list(range(n_ctx)), [0] * n_ctx
        for j, pair in enumerate(item.pairs):
            ids += pair.option
            pos += range(n_ctx, n_ctx + len(pair.option))
            seg += [j + 1] * len(pair.option)
        rows.append(ids), positions.append(pos), segments.append(seg)
    width = max(map(len, rows))
    fill = [width - len(r) for r in rows]
    input_ids = torch.tensor([r + [pad] * f for r, f in zip(rows, fill, strict=True)], device=device)  # (B, T)
    position_ids = torch.tensor([p + [0] * f for p, f in zip(positions, fill, strict=True)], device=device)
    seg = torch.tensor([s + [-1] * f for s, f in zip(segments, fill, strict=True)], device=device)  # -1: padding
    causal = torch.ones(width, width, dtype=torch.bool, device=device).tril()  # [query, key]
    # a key is seen when it is earlier, real, and in the prompt or the query's own option; a pad
    # query sees itself (a row with nothing to see would give NaN), and its output is never read
    same = (seg[:, :, None] == seg[:, None, :]) | (seg[:, None, :] == 0)  # (B, T, T)
    allowed = causal & same & ((seg[:, None, :] >= 0) | torch.eye(width, dtype=torch.bool, device=device))
    return input_ids, position_ids, allowed


def _score_packed(engine: ModelEngine, inputs: list[ChoiceInput], k: int) -> list[list]:
    """The traces (one per option) of each prompt of one batch, from one forward pass."""
    device = engine.device
    input_ids, position_ids, allowed = _packed_rows(inputs, device, pad_id(engine))
    dtype = engine.model.dtype
    mask = torch.zeros(allowed.shape, dtype=dtype, device=device).masked_fill(~allowed, torch.finfo(dtype).min)
    # which logits row predicts which token: the prompt's tokens 1..P-1, then each option's tokens
    # (an option's first token is predicted at the prompt's last column, the others inside the option)
    rows, cols, targets, cuts = [], [], [], []
    for b, item in enumerate(inputs):
        n_ctx = len(item.pairs[0].context)
        rows += [b] * (n_ctx - 1)
        cols += range(n_ctx - 1)
        targets += range(1, n_ctx)
        cuts.append(len(rows))
        start = n_ctx
        for pair in item.pairs:
            m = len(pair.option)
            rows += [b] * m
            cols += [n_ctx - 1, *range(start, start + m - 1)]
            targets += range(start, start + m)
            start += m
            cuts.append(len(rows))
    with torch.inference_mode():
        logits = engine.model(input_ids=input_ids, attention_mask=mask[:, None], position_ids=position_ids,
                              use_cache=False).logits  # (B, T, V)
        rows_t = torch.tensor(rows, device=device)
        picked = logits[rows_t, torch.tensor(cols, device=device)]  # (M, V)
        chosen = input_ids[rows_t, torch.tensor(targets, device=device)]  # (M,)
        del logits
        part = summarize_rows(picked, chosen, k)
    pieces = iter(split_rows(to_host([part]), np.array(cuts[:-1])))
    out = []
    for item in inputs:
        prompt_rows = next(pieces)
        row = []
        for option, pair in zip(item.options, item.pairs, strict=True):
            # prompt_len is the prompt's: the option's tokens are the trace's completion
            record = Recorder(engine, pair.context, k, len(pair.context) + len(pair.option), processed=False)
            record.add(prompt_rows)
            record.add(next(pieces))
            trace = record.trace({**engine.trace_meta(k), "mode": "choose", "option": option, **input_meta(item)})
            mark_straddle(trace, pair)
            row.append(trace)
        out.append(row)
    return out

