"""The user's face of a runner behind a server (`RemoteRunner`): `lv.connect` returns one, the
same face as the local runner's, over a server's engine (`engine.RemoteEngine` and each server's
own). A list of inputs goes out as concurrent requests (`corpus`), ``choose`` through `choose`.
"""

from __future__ import annotations

from ..request import batch_items
from ..runner import Runner, check_keywords, jobs_of
from .choose import choose
from .corpus import generate_corpus, score_corpus
from .engine import RemoteEngine

__all__ = ["RemoteRunner"]


class RemoteRunner(Runner):
    """A model behind a server: generate / stream / score / choose through HTTP, returning a Trace.

    The face over a server's engine (the class's ``_engine_type``: `RemoteEngine` and each server's
    own), which holds the address, the requests and the stream loop; ``base_url`` and ``server``
    say where and what the server is.
    """

    _engine_type: type[RemoteEngine] = RemoteEngine

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None, *,
                 timeout: float = 120.0, max_top_logprobs: int | None = None, tokenizer=None,
                 listed: list | None = None):
        self.engine = self._engine_type(base_url, model, api_key, timeout=timeout, max_top_logprobs=max_top_logprobs,
                                       tokenizer=tokenizer, listed=listed)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model} at {self.base_url} ({self.server})>"

    @property
    def base_url(self) -> str:
        """The API's base URL (ending in ``/v1``)."""
        return self.engine.base_url

    @property
    def server(self) -> str:
        """Which server answers: "openai", "vllm", "llama.cpp"."""
        return self.engine.server

    # -- many inputs at once: concurrent requests (corpus.py) ----------------------------

    def generate(self, prompt=None, *, messages=None, prompt_ids=None, concurrency=None, **kwargs):
        """`Runner.generate`; given a list (of texts, ``messages`` lists, ``prompt_ids`` lists), an
        `lv.Corpus` in input order, with at most ``concurrency`` requests in flight at once, so a
        batching server (vLLM) runs them together; with ``seed=s`` item ``i`` gets seed ``s + i``.
        Without ``concurrency``, the runner chooses (`in_flight`: the server's own limit, or found on
        vLLM by growing it while tokens/s rises) and ``corpus.meta["concurrency"]`` says what it chose."""
        items = batch_items(prompt, messages, prompt_ids)
        if items is None:
            _no_concurrency(concurrency)
            check_keywords("generate", kwargs, Runner.generate, extra=("concurrency",))
            return super().generate(prompt, messages=messages, prompt_ids=prompt_ids, **kwargs)
        check_keywords("generate", kwargs, generate_corpus, Runner.generate, extra=("concurrency",))
        # one job for the whole corpus: the workers use the per-item path, which takes no lock
        return jobs_of(self).call("runner.generate",
                                  lambda: generate_corpus(self.engine, items, concurrency=concurrency, **kwargs))

    def score(self, text=None, *, messages=None, prompt_ids=None, concurrency=None, labels=None, metadata=None,
              **kwargs):
        """`Runner.score`; given a list, an `lv.Corpus` scored by concurrent requests (see `generate`),
        with a label and a metadata dict per item when ``labels=`` / ``metadata=`` are given."""
        items = batch_items(text, messages, prompt_ids)
        if items is None:
            _no_concurrency(concurrency)
            check_keywords("score", kwargs, Runner.score, extra=("concurrency",))
            if labels is not None or metadata is not None:
                raise ValueError("labels= and metadata= label the items of a list (a corpus); one text has none")
            return super().score(text, messages=messages, prompt_ids=prompt_ids, **kwargs)
        check_keywords("score", kwargs, score_corpus, extra=("text", "messages", "prompt_ids"))
        corpus = jobs_of(self).call("runner.score",
                                    lambda: score_corpus(self.engine, items, concurrency=concurrency, **kwargs))
        return corpus.labelled(labels, metadata)

    def choose(self, prompt=None, options=None, *, messages=None, top_logprobs: int = 5, length: str = "sum",
               gold=None, concurrency: int | None = None, progress: bool = True, strict: bool = False):
        """The probability of each given option after the prompt: an `lv.Choices`, as the local
        runner's ``choose`` gives it (``length``, ``gold``, ``strict``, a list of prompts: a row per prompt,
        ``options=[[...], [...]]``: each prompt's own options).

        The server scores each prompt + option given as token ids (split as lm-eval does, with the
        server's tokenizer), one request per prompt for all its options, at most ``concurrency``
        (default 8) requests at once (`remote.choose`). It needs logprobs of given tokens: vLLM has
        them (``prompt_logprobs``); llama.cpp generates each option forced by a grammar of token ids
        and reports its logprobs from before the samplers (`remote.llamacpp_score`); on a server
        without either (the OpenAI API, Ollama) this raises a ValueError that says so and what to use instead.
        """
        return jobs_of(self).call("runner.choose", lambda: choose(
            self.engine, prompt, options, messages=messages, top_logprobs=top_logprobs, length=length, gold=gold,
            concurrency=concurrency, progress=progress, strict=strict))


def _no_concurrency(concurrency) -> None:
    if concurrency is not None:
        raise ValueError("concurrency= is for a list of inputs (a corpus); one text is one request")
