"""`lv.connect`: ask the server what it is (its ``/models`` listing) and return that server's runner.

    runner = lv.connect("http://127.0.0.1:8011/v1")          # model: the server's first
    t = runner.generate("A robot may not injure a human being", max_new_tokens=32, top_logprobs=5)
    runner.generate(messages=[{"role": "user", "content": "Hi"}], temperature=0.7, seed=0)
    for t in runner.stream("Once upon a time", max_new_tokens=64): ...   # the server's SSE stream
    runner.generate(prompt_ids=[1, 2, 3])                     # token ids as the prompt (vLLM, llama.cpp)
    runner.score("Text to score, token by token.")            # vLLM: prompt_logprobs; llama.cpp: forced
"""

from __future__ import annotations

from typing import Any

from .engine import api_key_of, base_url_of, list_models
from .llamacpp import LlamaCppRunner, is_llamacpp_listing
from .openai import OpenAIRunner
from .runner import RemoteRunner
from .vllm import VLLMRunner, is_vllm_listing

__all__ = ["connect"]


def connect(base_url: str | None = None, model: str | None = None, api_key: str | None = None, *,
            timeout: float = 120.0, **kwargs: Any) -> RemoteRunner:
    """A runner for the server at `base_url` (e.g. ``http://127.0.0.1:8011/v1``): a `VLLMRunner`
    on vLLM, a `LlamaCppRunner` on llama.cpp's llama-server, else an `OpenAIRunner` (the OpenAI API).

    Parameters
    ----------
    base_url : str, optional
        The API's base URL, as the ``openai`` SDK takes it; ``/v1`` is added when the URL has no
        path. Default ``$OPENAI_BASE_URL``.
    model : str, optional
        The served model's name; default: the first the server lists at ``/models``.
    api_key : str, optional
        Sent as a bearer token; default ``$OPENAI_API_KEY`` (a local vLLM needs none).
    timeout : float
        The read timeout, in seconds (default 120): how long the server may stay silent, before
        its answer or between two events of a stream. A stream it breaks off (it stops, stalls
        past this, a proxy cuts it) ends with the tokens received, ``finish_reason`` "error" and
        ``meta["error"]`` saying what happened; a server that cannot be reached raises ServerError.
    **kwargs
        ``max_top_logprobs`` (the server's cap, default 20), ``tokenizer`` (the served model's
        transformers tokenizer: on vLLM every token and alternative then comes back as an id and
        is decoded to its exact bytes here).
    """
    url = base_url_of(base_url)
    listed = list_models(url, api_key_of(api_key), float(timeout))
    if is_vllm_listing(listed):
        kind = VLLMRunner
    elif is_llamacpp_listing(listed):
        kind = LlamaCppRunner
    else:
        kind = OpenAIRunner
    return kind(url, model=model, api_key=api_key, timeout=timeout, listed=listed, **kwargs)
