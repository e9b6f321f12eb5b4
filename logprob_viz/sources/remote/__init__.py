"""Remote runners behind `lv.connect`: the same generate / stream / score on a model behind a server.

    connection.py  `connect`: asks the server what it is and returns its runner
    runner.py      `RemoteRunner`: the user's face of a server's runner (lists as concurrent requests)
    engine.py      `RemoteEngine`: what every server's engine shares: address and model, requests,
                   the one streaming loop
    openai.py      `OpenAIRunner` over `OpenAIEngine`: the OpenAI API (OpenAI and any compatible server)
    vllm.py        `VLLMRunner` over `VLLMEngine`: plus prompt logprobs, token ids, tokens as ids, score
    llamacpp.py    `LlamaCppRunner` over `LlamaCppEngine`: llama-server through its native /completion
    llamacpp_score.py  score and choose on llama-server (no echo): the given tokens forced by a token-id grammar
    corpus.py      a list of inputs as concurrent requests (at most `concurrency`): an lv.Corpus
    choose.py      `choose`: given options scored after each prompt by the server (vLLM's prompt_logprobs)
    http.py        JSON requests, SSE streams and error bodies, standard library only
    inflight.py    how many requests a corpus keeps in flight (given, the server's limit, or grown)
"""

from __future__ import annotations

from ..errors import ServerError
from .connection import connect
from .corpus import CorpusIncomplete
from .llamacpp import LlamaCppRunner
from .openai import OpenAIRunner
from .vllm import VLLMRunner

__all__ = ["connect", "ServerError", "CorpusIncomplete", "OpenAIRunner", "VLLMRunner", "LlamaCppRunner"]
