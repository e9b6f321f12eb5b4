"""Adapters: pure functions that turn logprobs returned by other tools into a `Trace`.

``openai.from_openai`` reads every OpenAI-compatible format (Completions, Chat Completions,
stream chunks, raw SSE text, vLLM's ``prompt_logprobs``).
"""
