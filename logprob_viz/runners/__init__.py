"""Runners: produce a `Trace` by generating, streaming or scoring text with a model.

- ``base``: the shared generate / stream / score signature, argument checks, sampling
  settings, progress bars and interrupts (Ctrl-C, ``stop=``);
- ``transformers``: the local runner (a transformers causal LM, our own KV-cache loop);
  ``distribution``: its per-position math; ``recording``: its host-side record and snapshots;
  ``loading``: ``lv.load`` and the default runner behind ``lv.generate`` / ``lv.score``;
- ``openai``: ``lv.connect``, a runner on an OpenAI-compatible server (vLLM first);
  ``http``: its requests, SSE streams and errors.
"""
