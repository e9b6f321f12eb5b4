"""The local runner: the user's face over a transformers causal LM (`engine.TransformersEngine`), which
generates, streams, scores, chooses, reads the lens and attributes, one job at a time.

The face is what a user calls (`sources.runner.Runner`, plus the lens, attribution and the batched lists);
the steps those calls drive live on ``runner.engine``. Loading a model is in `loading`.
"""

from __future__ import annotations

import functools

from ..request import batch_items
from ..runner import Runner, check_keywords, jobs_of
from .attribution import attribute
from .batch import generate_batch, score_batch
from .choose import choose
from .engine import GPU_SYNC_EVERY, TransformersEngine
from .lens import lens

__all__ = ["TransformersRunner", "GPU_SYNC_EVERY"]


class TransformersRunner(Runner):
    """Generates, streams or scores text with a transformers causal LM, recording a Trace.

    Build one with `load`. ``runner.model`` and ``runner.tokenizer`` are the transformers
    objects, for users who go further; ``runner.engine`` (a `TransformersEngine`) holds the steps
    the calls drive (``forward``, ``vocab``, ``sync_every``, ...).
    """

    def __init__(self, model, tokenizer, name: str | None = None):
        self.engine = TransformersEngine(model, tokenizer, name)

    def __repr__(self) -> str:
        return f"<TransformersRunner {self.name} on {self.device} ({self.model.dtype})>"

    def lens(self, text_or_trace, *, top_logprobs: int = 5, layers=None):
        """Per-layer next-token predictions (the logit lens) of a text or a trace of this model.

        See `logprob_viz.sources.local.lens.lens`: row ``l`` reads block ``l``'s output through the final norm
        and the output embedding; the last row is the model's own output.
        """
        run = functools.partial(lens, self.engine, text_or_trace, top_logprobs=top_logprobs, layers=layers)
        return jobs_of(self).call("runner.lens", run)  # one job at a time on the model

    def attribute(self, trace, *, at: int, contrast=None, method: str = "gradient_x_input", **options):
        """Why the token at `at`: one score per earlier token (an `Attribution`).

        See `logprob_viz.sources.local.attribution.attribute`: ``contrast=" Jupiter"`` (text or id)
        attributes log p(token) - log p(contrast); methods ``"gradient_x_input"``,
        ``"integrated_gradients"`` (``n_steps``, ``baseline``, ``steps``) and ``"occlusion"``.
        """
        run = functools.partial(attribute, self.engine, trace, at=at, contrast=contrast, method=method, **options)
        return jobs_of(self).call("runner.attribute", run)  # one job at a time on the model

    # -- many inputs at once: batched forward passes (batch.py) -------------------------

    def score(self, text=None, *, messages=None, prompt_ids=None, batch_tokens=None, labels=None, metadata=None,
              **kwargs):
        """`Runner.score`; given a list (of texts, of ``messages`` lists, of ``prompt_ids`` lists), an
        `lv.Corpus` scored in batches of at most ``batch_tokens`` padded tokens (see `batch.score_batch`),
        with a label (``labels=[...]``) and a metadata dict (``metadata=[...]``) per item when given."""
        items = batch_items(text, messages, prompt_ids)
        if items is None:
            check_keywords("score", kwargs, Runner.score, extra=("batch_tokens",))
            if labels is not None or metadata is not None:
                raise ValueError("labels= and metadata= label the items of a list (a corpus); one text has none")
            return super().score(text, messages=messages, prompt_ids=prompt_ids, **kwargs)
        check_keywords("score", kwargs, score_batch, extra=("text", "messages", "prompt_ids"))

        run = functools.partial(score_batch, self.engine, items, batch_tokens=batch_tokens, **kwargs)
        corpus = jobs_of(self).call("runner.score", run)
        return corpus.labelled(labels, metadata)

    def choose(self, prompt=None, options=None, *, messages=None, top_logprobs: int = 5, length: str = "sum",
               gold=None, batch_tokens: int | None = None, progress: bool = True, strict: bool = False):
        """The probability of each given option after the prompt: an `lv.Choices`.

        Every option (one token or several) is scored teacher-forced after the prompt, tokenized as
        lm-eval does (`logprob_viz.sources.choose`); ``probs`` is a softmax over the options of their
        logprob sums (``length="sum"``), or of the sums per token (``"per_token"``), per character
        (``"per_char"``, lm-eval's acc_norm) or per UTF-8 byte (``"per_byte"``, lm-eval's acc_bytes);
        ``choices.with_length(rule)`` gives another rule's probabilities without a forward pass.
        A list of prompts (or of ``messages`` lists) gives a row per prompt, with the same options or,
        for ``options=[[...], [...]]``, each prompt's own (as many for each); ``gold`` (an option's
        text or index per prompt) marks the right answers, for ``choices.calibration()``. The prompt
        goes through the model once for all its options (`local.choose`: one packed row per prompt, in
        batches of at most ``batch_tokens`` tokens).
        Where the tokenizer merges an option's start into the prompt's last token, part of the option
        goes unscored (as in lm-eval): a warning names the bytes and the scored text, and two options
        scored as the same text; ``strict=True`` raises a ValueError instead (its ``.choices`` the result).
        """
        run = functools.partial(choose, self.engine, prompt, options, messages=messages, top_logprobs=top_logprobs,
                                length=length, gold=gold, batch_tokens=batch_tokens, progress=progress,
                                strict=strict)
        return jobs_of(self).call("runner.choose", run)

    def generate(self, prompt=None, *, messages=None, prompt_ids=None, batch_tokens=None, **kwargs):
        """`Runner.generate`; given a list, an `lv.Corpus` decoded in batches (see `batch.generate_batch`;
        with ``seed=s``, item ``i`` is sampled with seed ``s + i``)."""
        items = batch_items(prompt, messages, prompt_ids)
        if items is None:
            check_keywords("generate", kwargs, Runner.generate, extra=("batch_tokens",))
            return super().generate(prompt, messages=messages, prompt_ids=prompt_ids, **kwargs)
        check_keywords("generate", kwargs, generate_batch, extra=("prompt", "messages", "prompt_ids"))

        run = functools.partial(generate_batch, self.engine, items, batch_tokens=batch_tokens, **kwargs)
        return jobs_of(self).call("runner.generate", run)
