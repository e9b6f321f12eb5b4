"""Readers (`lv.read`): pure functions that turn logprobs returned by servers and APIs into a `Trace`.

    lv.read(response)          # any supported format (reader.read)
    lv.from_openai(response)   # OpenAI-compatible only (openai.from_openai)

One parser per source format, over one shared intermediate form (`position.Token` per position,
or `columns.Columns` for a whole section that a parser's one-pass path read and `ranking` ranked
at once), and one assembler (`assemble.build_trace`) that builds the trace:

- ``inputs``             dict / JSON text / SDK object / SSE / NDJSON / chunk list -> plain data
- ``errors``             `LogprobFormatError` (malformed input, with the field's path),
                         `ServerError` (a server's error body); ``checks`` the shape
                         checks, ``values`` the value checks (logprobs, probabilities, ids)
- ``position``, ``columns``, ``assemble`` the shared forms (per token, per section); the one assembler
- ``ranking``            a section's alternatives ranked at once (the per-position rules, in numpy)
- ``reader``             `read`: recognises the format and calls its parser
- ``openai``             Completions / Chat choices (``openai_shapes``: the shapes and stream merging;
                         ``openai_completions``, ``vllm_prompt``: their sections; ``openai_tools``:
                         a Chat choice's tool calls, kept in ``meta["tool_calls"]``)
- ``entries``            the ``{token, logprob, bytes, top_logprobs}`` entry that Chat, Ollama,
                         Responses and llama.cpp's /v1 share
- ``llamacpp``, ``tgi``, ``sglang``, ``ollama``, ``openai_responses``, ``openai_audio`` (transcriptions),
  ``gemini``: one module each
- ``numbers``            ``meta["numbers"]``: raw or processed, where the server documents which
- ``corpus``             `lv.Corpus.from_responses`, ``from_pandas``, ``read_jsonl``: each item through `read`
- ``vllm_rows``          the rows of a ``ray.data.llm`` vLLM processor as corpus rows (`lv.ray.from_vllm_rows`)
- ``lm_eval``            `lv.read_lm_eval`: lm-eval's ``--log_samples`` file of a multiple-choice task as Choices
"""

from __future__ import annotations

from ..errors import deprecated_alias
from .errors import LogprobFormatError, ServerError
from .openai import from_openai
from .reader import KNOWN_FORMATS, read

__all__ = ["read", "from_openai", "LogprobFormatError", "ServerError", "KNOWN_FORMATS"]


def __getattr__(name: str):  # OpenAIResponseError, the old name of ServerError, still importable from here
    return deprecated_alias(__name__, name)
