"""The explorer's engine choice: whose sampler the pinned token's numbers follow.

The same temperature, top-k, top-p and min-p keep different tokens in transformers, vLLM, llama.cpp,
SGLang and Ollama, because each applies them in its own order (`records.samplers`, docs/engines.md).
The choice is the state's ``engine`` trait (`state.py`); the pinned panel's readout, its table's
kept / cut marks and its bands follow that engine's order (`lv.sampled_from`), and one line says
when the engine keeps a different set than transformers would at the pinned position. It changes
only how the numbers are read: the local runner always samples in transformers' order.
"""

from __future__ import annotations

from functools import partial

import ipywidgets as w
import numpy as np

from ...records.samplers import ENGINES, kept_count, sampled_from
from ...records.sampling import band_of

__all__ = ["ENGINE_NAMES", "engine_dropdown", "set_engine", "probabilities_under", "bands_under",
           "differs_line", "engine_of", "checked_engine"]

# Each engine as people write it (the choice's labels and the lines that name it)
ENGINE_NAMES = {"transformers": "transformers", "vllm": "vLLM", "llama.cpp": "llama.cpp", "sglang": "SGLang",
                "ollama": "Ollama"}
assert tuple(ENGINE_NAMES) == ENGINES  # one name per engine lv.sampled_from follows


def engine_of(runner) -> str:
    """Whose order the explorer follows by default: a server runner's own engine where `lv.sampled_from`
    knows it (vLLM, llama.cpp: Generate there samples in that server's order), else transformers'
    (the local runner's order; an OpenAI-compatible server that does not say which engine it runs)."""
    server = getattr(getattr(runner, "engine", None), "server", None)
    return server if server in ENGINES and server != "transformers" else "transformers"


def checked_engine(engine) -> str:
    """`lv.explore(engine=...)`: one of the engines, or a ValueError naming them."""
    if engine not in ENGINES:
        raise ValueError(f"lv.explore(engine=...) must be one of {', '.join(repr(e) for e in ENGINES)}: whose order "
                         f"of temperature, top-k, top-p and min-p the pinned numbers follow; got {engine!r}")
    return engine


def set_engine(state, engine: str) -> None:
    """The `engine` action: follow `engine`'s order; an unknown name says the known ones in the status line."""
    if engine not in ENGINES:
        state.say(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}", "error")
        return
    state.engine = engine


def engine_dropdown(state) -> w.Dropdown:
    """The choice, tied to ``state.engine`` both ways."""
    choice = w.Dropdown(options=[(name, key) for key, name in ENGINE_NAMES.items()], value=state.engine,
                        description="sampled as in", style={"description_width": "initial"},
                        tooltip="whose order of temperature, top-k, top-p and min-p the numbers below follow "
                                "(the local runner samples in transformers' order)",
                        layout=w.Layout(width="20em"))
    choice.add_class("lv-explore-engine")
    w.link((choice, "value"), (state, "engine"))
    return choice


def _arguments(settings) -> dict:
    return {"temperature": float(settings.temperature), "top_k": int(settings.top_k),
            "top_p": float(settings.top_p), "min_p": float(settings.min_p)}


def probabilities_under(logprobs: np.ndarray, settings, engine: str) -> np.ndarray:
    """Probabilities (V,) of the distribution `engine` samples from under `settings` (0 where cut)."""
    return np.exp(sampled_from(logprobs, **_arguments(settings), engine=engine))


def bands_under(logprobs: np.ndarray, token_id: int, settings, engine: str) -> dict:
    """The token's bands (`band_of`) with `engine`'s cut."""
    if engine == "transformers":
        return band_of(logprobs, token_id, settings)
    count = partial(_count, engine=engine)
    return band_of(logprobs, token_id, settings, kept_count=count)


def _count(desc, temperature, top_k, top_p, min_p, *, engine: str) -> int:
    return kept_count(desc, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p, engine=engine)


def differs_line(logprobs: np.ndarray, settings, engine: str, kept: int) -> str:
    """"llama.cpp keeps 5 tokens here, transformers 3" when `engine` (which keeps `kept`) keeps another
    set than transformers at this position; "" when the sets are the same (or the engine is transformers)."""
    if engine == "transformers":
        return ""
    theirs = int(np.count_nonzero(np.isfinite(sampled_from(logprobs, **_arguments(settings)))))
    if theirs == kept:  # both keep a most-likely-first prefix: the same count is the same set
        return ""
    return f"{ENGINE_NAMES[engine]} keeps {_tokens(kept)} here, transformers {theirs:,}"


def _tokens(n: int) -> str:
    return "1 token" if n == 1 else f"{n:,} tokens"
