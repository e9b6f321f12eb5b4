"""Adapters: pure functions that turn logprobs returned by servers and APIs into a `Trace`.

One parser per source format, over one shared intermediate form (`form.Token`), and one
assembler (`assemble.build_trace`) that builds the trace:

- ``inputs``            dict / JSON text / SDK object / SSE / NDJSON / chunk list -> plain data
- ``errors``            `LogprobFormatError` (malformed input, with the field's path),
                        `OpenAIResponseError` (a server's error body), value checks
- ``openai``            `from_openai`: OpenAI-compatible Completions and Chat (+ stream chunks)
- ``openai_shapes``     the shapes such a response arrives in; stream chunk merging
- ``openai_completions``, ``openai_chat``, ``vllm_prompt``: their per-position sections

`from_openai` is re-exported here; `read` (every format) lives in ``adapters.read``.
"""

from __future__ import annotations

from .errors import LogprobFormatError, OpenAIResponseError
from .openai import from_openai

__all__ = ["from_openai", "LogprobFormatError", "OpenAIResponseError"]
