"""The local runner's engine: a transformers causal LM that prepares a request, runs the decode loop
and scores a prompt, recording a Trace (`sources.engine.Engine`, and `ModelEngine` for the batches).

Generation is our own KV-cache loop rather than ``model.generate(output_scores=True)``: that
keeps every step's full [vocab] scores, where we keep only what the trace needs (O(K) per
token), and it lets us record the raw and the processed (temperature / top-k / top-p)
distribution side by side. The user's face over it is `runner.TransformersRunner`; the shared
drive loop is in `sources.engine`, the per-position math in `distribution`.
"""

from __future__ import annotations

import contextlib
import inspect

import torch

from ...records.tokens import VocabTexts, token_bytes_table
from ...records.trace import Trace
from ..engine import Capabilities
from ..progress import INTERRUPTS, note_interrupt
from ..request import Request, Step, check_prompt_ids, is_int
from .distribution import process, summarize, summarize_rows, to_host
from .recording import Recorder

__all__ = ["TransformersEngine", "GPU_SYNC_EVERY"]

# On a GPU, reading a step's result on the host waits for the GPU to finish it. We read the
# recorded steps (and check for end-of-sequence) once per chunk instead; a chunk may run a few
# steps past EOS, which are then dropped. On the CPU there is nothing to wait for.
GPU_SYNC_EVERY = 16
# Tokens per snapshot when streaming on a GPU (each snapshot is a host read); 1 on the CPU.
GPU_STREAM_EVERY = 4


class TransformersEngine:
    """The model, its tokenizer and the steps a `TransformersRunner` drives: ``prepare``, ``steps``,
    ``score_request``, and what its batches, its recorder, ``choose``, the lens and attribution call
    (``forward``, ``eos_ids``, ``trace_meta``, ``text_of``, ``bytes_of``, ``vocab``)."""

    def __init__(self, model, tokenizer, name: str | None = None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name or getattr(model.config, "_name_or_path", None) or type(model).__name__
        self._vocab: VocabTexts | None = None
        self._cache_arg: str | None = None
        # Steps between reads of the results on the host; None: every step on the CPU, GPU_SYNC_EVERY on a GPU.
        self.sync_every: int | None = None

    @property
    def device(self) -> torch.device:
        return self.model.device

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    @property
    def max_top_logprobs(self) -> int:
        """Every token of the vocabulary can be an alternative here."""
        return self.vocab_size

    @property
    def capabilities(self) -> Capabilities:
        """The model is here: every token can be an alternative, ids continue, min_p is applied, and the
        whole next-token distribution is at hand (the explorer's pinned panel, its warm-up)."""
        return Capabilities(max_top_logprobs=self.vocab_size, top_logprobs_limit="for this runner",
                            vocab_size=self.vocab_size, can_continue_from_ids=True, in_process=True,
                            applies_min_p=True)

    @property
    def vocab(self) -> VocabTexts:
        """The display text of every token id, shared by every trace of this runner."""
        if self._vocab is None:
            self._vocab = VocabTexts(token_bytes_table(self.tokenizer))
        return self._vocab

    # -- the steps the runner's face drives (sources.engine.Engine) -------------------------

    def prepare(self, req: Request) -> None:
        if req.prompt_ids is not None:
            req.prompt_ids = check_prompt_ids(req.prompt_ids, self.vocab_size)
        else:
            req.prompt_ids = self._encode(req.text, req.messages, req.scoring)
        self._check_length(len(req.prompt_ids), req.max_new_tokens, req.scoring)

    def steps(self, req: Request, snapshots: bool):
        """The decode loop: yields a `Step` per chunk of tokens read on the host, returns the Trace."""
        ids, k, sampling, n_max = req.prompt_ids, req.top_logprobs, req.sampling, req.max_new_tokens
        on_cpu = self.device.type == "cpu"
        if snapshots:
            chunk = req.stream_every or (1 if on_cpu else GPU_STREAM_EVERY)
        else:
            chunk = self.sync_every or (1 if on_cpu else GPU_SYNC_EVERY)
        generator = None
        if sampling is not None:
            generator = torch.Generator(device=self.device)
            generator.manual_seed(sampling.seed if sampling.seed is not None else torch.seed())
        keep_processed = sampling is not None and sampling.changes_distribution
        eos = self.eos_ids()
        meta = {**self.trace_meta(k), **req.sampling_meta(), "finish_reason": "length", **req.input_meta()}
        record = Recorder(self, ids, k, len(ids) + n_max, processed=keep_processed)

        # inference_mode per model call, never across a yield: the caller's code runs between steps.
        input_ids = torch.tensor([ids], device=self.device)  # (1, P)
        with torch.inference_mode():
            logits, cache = self.forward(input_ids)  # (1, P, V)
            record.add(to_host([summarize_rows(logits[0, :-1], input_ids[0, 1:], k)]))
            next_logits = logits[:, -1]  # (1, V)
            del logits
        pending: list[dict] = []  # steps recorded on the device, not yet copied to the host
        read_from = record.n
        try:
            if n_max and snapshots:
                yield Step(0, lambda: record.trace(meta, copy=False))  # the scored prompt, at once
            for step in range(n_max):
                with torch.inference_mode():
                    processed = None
                    if sampling is None:
                        chosen = next_logits.argmax(dim=-1)  # (1,)
                    else:
                        processed = process(sampling, next_logits.float())  # (1, V)
                        chosen = torch.multinomial(processed.exp(), 1, generator=generator)[:, 0]  # (1,)
                        if not keep_processed:
                            processed = None  # the same as the raw distribution: nothing to add
                    pending.append(summarize(next_logits, chosen, k, processed))
                last = step + 1 == n_max
                if (step + 1) % chunk == 0 or last:
                    record.add(to_host(pending))
                    pending = []
                    if record.stop_at(eos, read_from):
                        meta["finish_reason"] = "eos"
                        break
                    read_from = record.n
                    if last:
                        break
                    yield Step(record.n_new, lambda: record.trace(meta, copy=False))
                with torch.inference_mode():
                    logits, cache = self.forward(chosen[:, None], cache)  # (1, 1, V)
                    next_logits = logits[:, -1]
        except INTERRUPTS as error:
            meta["finish_reason"] = "interrupted"
            note_interrupt(error)
            record.add(to_host(pending))  # steps computed but not yet read
            record.stop_at(eos, read_from)
        return record.trace(meta)

    def score_request(self, req: Request, bar) -> Trace:
        ids, k = req.prompt_ids, req.top_logprobs
        input_ids = torch.tensor([ids], device=self.device)
        record = Recorder(self, ids, k, len(ids), processed=False)
        # One plain forward pass (as fast as a bare one); the bar follows it block by block.
        with torch.inference_mode(), _layer_progress(self.model, lambda done: bar.update_to(int(len(ids) * done))):
            logits = self.model(input_ids=input_ids, use_cache=False).logits[0]  # (N, V)
            part = summarize_rows(logits[:-1], input_ids[0, 1:], k)
            del logits
        record.add(to_host([part]))
        return record.trace({**self.trace_meta(k), "mode": "score", **req.input_meta()})

    def check_top_logprobs(self, top_logprobs) -> int:
        if not is_int(top_logprobs) or not 0 <= top_logprobs <= self.vocab_size:
            raise ValueError(f"top_logprobs must be an int between 0 and the vocabulary size ({self.vocab_size}), "
                             f"got {top_logprobs!r}")
        return int(top_logprobs)

    def token_id(self, text: str) -> int:
        """The id of `text` when the tokenizer encodes it as exactly one token; else a ValueError."""
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"] if isinstance(text, str) and text else []
        if len(ids) != 1:
            raise ValueError(f"{text!r} is not one token of {self.name}: the tokenizer makes {len(ids)} tokens "
                             f"{ids[:8]}; give one token's text or its id")
        return int(ids[0])

    def trace_meta(self, k: int) -> dict:
        return {
            "source": "transformers",
            "model": self.name,
            "device": str(self.device),
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "top_logprobs": k,
        }

    def forward(self, input_ids: torch.Tensor, cache=None, **inputs):
        """One forward pass with the KV cache: (logits, cache). ``inputs``: the model's other inputs
        (a batch's attention_mask and position_ids)."""
        # transformers 5 renamed past_key_values to cache; older releases know only the old name.
        if self._cache_arg is None:
            params = inspect.signature(self.model.forward).parameters
            self._cache_arg = "cache" if "cache" in params else "past_key_values"
        extra = {} if cache is None else {self._cache_arg: cache}
        out = self.model(input_ids=input_ids, use_cache=True, **inputs, **extra)
        return out.logits, getattr(out, self._cache_arg)

    def _encode(self, text: str | None, messages: list[dict] | None, scoring: bool = False) -> list[int]:
        if messages is not None:
            if getattr(self.tokenizer, "chat_template", None) is None:
                raise ValueError(f"{self.name} has no chat template; pass the text itself instead of messages")
            # Scoring a conversation that ends with the assistant's turn scores it as given: no empty
            # assistant turn (the generation prompt) after it, which the model would be scored on too.
            ends_with_answer = scoring and bool(messages) and isinstance(messages[-1], dict) \
                and messages[-1].get("role") == "assistant"
            text = self.tokenizer.apply_chat_template(messages, tokenize=False,
                                                      add_generation_prompt=not ends_with_answer)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            ids = self.tokenizer(text)["input_ids"]
        if not ids:
            raise ValueError("the text is empty: give at least one character to start from")
        return list(ids)

    def _check_length(self, n_prompt: int, max_new_tokens: int = 0, scoring: bool = False) -> None:
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is None or n_prompt + max_new_tokens <= limit:
            return
        if scoring:
            raise ValueError(f"the text is {n_prompt} tokens long, more than {self.name}'s context of {limit} tokens; "
                             f"score a shorter text (or the text in parts of at most {limit} tokens)")
        raise ValueError(f"{n_prompt + max_new_tokens} tokens (a prompt of {n_prompt} + max_new_tokens="
                         f"{max_new_tokens}) exceed {self.name}'s context of {limit}; shorten the text or "
                         "max_new_tokens")

    def eos_ids(self) -> list[int]:
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return [] if eos is None else [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]

    def bytes_of(self, token_id: int) -> bytes:
        # Models may pad their output layer past the tokenizer's vocabulary: "<id N>".
        return self.vocab.bytes_of(token_id)

    def text_of(self, token_id: int) -> str:
        # One shared str per vocabulary id: a trace's alternatives then cost a pointer each.
        return self.vocab[token_id]



@contextlib.contextmanager
def _layer_progress(model, report):
    """Call ``report(fraction of the decoder blocks done)`` as a forward pass goes through them."""
    layers = getattr(getattr(model, "model", None), "layers", None)
    if not isinstance(layers, torch.nn.ModuleList) or not len(layers):
        yield  # an architecture without model.layers: no progress within the pass
        return
    count = len(layers)
    hooks = [layer.register_forward_hook(lambda *_, i=i: report((i + 1) / count)) for i, layer in enumerate(layers)]
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()

