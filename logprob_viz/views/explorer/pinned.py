"""The explorer's pinned-token panel: at the pinned token, each alternative's probability as the
model gave it and under the controls' sampling settings — exactly, from the model's whole next-token
distribution — and the band of temperatures / top-p / min-p values over which the token stays
sampleable.

The distribution at a position costs one forward pass; it is computed in a background thread
(under the runner's job lock, so it waits for a running stream) and kept per position, so moving
a slider afterwards is numpy only. The panel sits below the view: pinning never moves the text.
A server runner returns only the top K, from which no exact number under other settings follows:
the panel then shows for each of them the range its probability certainly lies in, whatever the
unknown rest holds (records/sampling_bounds.py), rather than an approximation a class would read as true.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import ipywidgets as w
import numpy as np

from ...records.sampling_bounds import probability_ranges
from ...records.trace import Trace
from ...sources.runner import Runner
from .engine_choice import ENGINE_NAMES, bands_under, differs_line, engine_dropdown, probabilities_under
from .pinned_html import panel_html, ranges_html, settings_words, unavailable_html, waiting_html
from .sampling_settings import Settings

__all__ = ["PinnedPanel", "Distributions", "has_full_distribution"]

log = logging.getLogger(__name__)

CACHED_POSITIONS = 32  # distributions kept (each is the vocabulary in float64: ~0.4 MB for 49k tokens)


def rank_in(logprobs: np.ndarray, i: int) -> int:
    """The 1-based rank of token `i` in a whole distribution (V,): one more than the tokens likelier
    than it (ties share the better rank, as the runner's ranks)."""
    return int(np.count_nonzero(logprobs > logprobs[i])) + 1


def has_full_distribution(runner) -> bool:
    """Whether `runner` can give the whole next-token distribution: the local runner (it has the model)."""
    return isinstance(runner, Runner) and runner.capabilities.in_process


class Distributions:
    """The model's full next-token distributions, one per token prefix, computed in the background."""

    def __init__(self, size: int = CACHED_POSITIONS) -> None:
        self.size = size
        self._cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._pending: set[tuple] = set()
        self.errors: dict[tuple, str] = {}
        self._wanted: tuple | None = None
        self._lock = threading.Lock()
        self._one_at_a_time = threading.Lock()

    def get(self, prefix: tuple) -> np.ndarray | None:
        with self._lock:
            found = self._cache.get(prefix)
            if found is not None:
                self._cache.move_to_end(prefix)
            return found

    def request(self, runner, prefix: tuple, done) -> None:
        """Compute the distribution after `prefix` in a thread (once), then call `done()`."""
        with self._lock:
            self._wanted = prefix  # arrowing through tokens asks for many: only the last one is computed
            if prefix in self._cache or prefix in self._pending:
                return
            self._pending.add(prefix)
            self.errors.pop(prefix, None)
        threading.Thread(target=self._compute, args=(runner, prefix, done), name="lv-pinned", daemon=True).start()

    def compute(self, runner, prefix: tuple) -> np.ndarray:
        """The distribution after `prefix`, now (in this thread)."""
        from ...sources.local.next_token import next_logprobs  # torch: only with a local runner

        found = self.get(prefix)
        if found is None:
            found = next_logprobs(runner, list(prefix))
            with self._lock:
                self._cache[prefix] = found
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        return found

    def _compute(self, runner, prefix: tuple, done) -> None:
        try:
            with self._one_at_a_time:
                if prefix != self._wanted:  # the pin moved on while this one waited: skip it
                    return
                self.compute(runner, prefix)
        except Exception as error:  # shown in the panel; the explorer goes on
            log.debug("the pinned distribution failed", exc_info=True)
            self.errors[prefix] = f"{type(error).__name__}: {error}"
        finally:
            with self._lock:
                self._pending.discard(prefix)
        done()


class PinnedPanel:
    """Below the view: the pinned token's numbers under the sampling settings, and its band.

    It follows the state (`state.py`): the text on show, the pinned token and the settings; the two
    lines of the view's column go to ``publish(readout)``. ``numbers`` holds what is on show (for
    tests and notebooks): per row token id, text, p(model), p(settings).
    """

    def __init__(self, state, runner, publish) -> None:
        self.html = w.HTML()
        self.engine = engine_dropdown(state)
        self.box = w.VBox([self.engine, self.html], layout=w.Layout(display="none", width="100%"))
        self.box.add_class("lv-explore-pinned")
        self.distributions = Distributions()
        self.numbers: dict | None = None
        self.shows = "none"  # what the panel shows: "none", "waiting", "unavailable", "exact" or "ranges"
        self.explorer_state, self.runner, self.publish = state, runner, publish
        self._lock = threading.RLock()
        state.observe(lambda _: self.show(), names=["current", "preview", "pinned", "settings", "engine"])

    def show(self) -> None:
        """Show the pinned token under the settings (hidden when nothing is pinned)."""
        state = self.explorer_state
        trace = state.on_show if state.current is not None else None
        at = state.pinned
        with self._lock:
            if trace is None or not 0 < at < len(trace):
                self.numbers = None
                self.box.layout.display = "none"
                self.publish({})
                return
            settings = _checked(state.settings)
            self._render(trace, at, settings)
            self.box.layout.display = "flex"
            self.publish(readout_of(trace, at, self.shows, self.numbers, settings, state.engine))

    def _render(self, trace: Trace, at: int, settings: Settings | None) -> None:
        prefix = tuple(int(i) for i in trace.token_ids[:at])
        self.shows = "unavailable"
        if settings is None:
            self.html.value = unavailable_html(trace, at, "a setting is out of range: see the status line")
            return
        if not has_full_distribution(self.runner) or min(prefix, default=-1) < 0:
            self.numbers = ranges_at(trace, at, settings, self.explorer_state.engine)
            if self.numbers is None:
                why = "the response holds no alternatives at this token, so nothing follows for other settings"
                self.html.value = unavailable_html(trace, at, why)
            else:
                self.html.value = ranges_html(trace, at, self.numbers)
            return
        logprobs = self.distributions.get(prefix)
        if logprobs is None:
            error = self.distributions.errors.get(prefix)
            if error is not None:
                self.html.value = unavailable_html(trace, at, f"the forward pass failed: {error}")
                return
            self.numbers, self.shows = None, "waiting"
            self.html.value = waiting_html(trace, at)
            self.distributions.request(self.runner, prefix, self.show)
            return
        self.numbers = numbers_at(trace, at, logprobs, settings, self.explorer_state.engine)
        self.html.value = panel_html(trace, at, self.numbers)


def readout_of(trace: Trace, at: int, state: str, numbers: dict | None, settings: Settings | None,
               engine: str = "transformers") -> dict:
    """The two lines in the view's column, as data: the pinned token's p as the model gave it and under
    the settings (exact, a range, or being computed), and what else to know. ``column`` holds the same
    numbers for every row of the token's chart, ``[id, text, low, high]`` (low == high when exact), so
    that the chart's column under the sliders shows what the readout and the table below show. Exact
    numbers follow `engine`'s order, named in the label unless it is transformers'."""
    chosen_p = float(np.exp(trace.logprobs[at])) if np.isfinite(trace.logprobs[at]) else None
    out = {"at": int(at), "token": trace.tokens[at], "model": chosen_p,
           "label": settings_words(settings) if settings is not None else "(a setting is out of range)"}
    if engine != "transformers" and settings is not None:
        out["label"] = f"{out['label']} as in {ENGINE_NAMES[engine]}"
    if numbers is not None and "kept" in numbers:
        row = next(r for r in numbers["rows"] if r["chosen"])
        note = f"rank {numbers['rank']} · {numbers['kept']:,} of {numbers['vocab']:,} tokens kept · exact (table below)"
        if numbers["differs"]:
            note = f"{numbers['differs']} · {note}"
        column = [[r["id"], r["text"], r["new"], r["new"]] for r in numbers["rows"]]
        return {**out, "engine": engine, "state": "exact", "model": row["model"], "sampled": row["new"], "note": note,
                "column": column}
    if numbers is not None:
        row = next((r for r in numbers["rows"] if r["chosen"]), None)
        note = "a range: the server lists only the top K; the table below says why"
        if row is None:
            return {**out, "state": "unavailable", "note": "not among the tokens the server listed: no range for it"}
        column = [[-1, r["text"], r["low"], r["high"]] for r in numbers["rows"]]
        return {**out, "engine": engine, "state": "ranges", "low": row["low"], "high": row["high"], "note": note,
                "column": column}
    if state == "waiting":
        return {**out, "state": "waiting", "note": "computing its exact numbers (one forward pass)…"}
    return {**out, "state": "unavailable", "note": "no numbers under the settings here: see the panel below"}


def _checked(settings: Settings) -> Settings | None:
    """`settings` if they are in range, else None (the status line says which is not)."""
    try:
        settings.check()
    except (ValueError, TypeError):
        return None
    return settings


def numbers_at(trace: Trace, at: int, logprobs: np.ndarray, settings: Settings,
               engine: str = "transformers") -> dict:
    """What the panel shows at token `at`: the rows (the trace's alternatives, then the chosen token
    when it is not among them), the kept count, and the chosen token's band, in `engine`'s order
    (``differs``: the line saying it keeps another set than transformers, "" when it does not)."""
    model = np.exp(logprobs)
    new = probabilities_under(logprobs, settings, engine)
    chosen = int(trace.token_ids[at])
    ids = [int(i) for i in trace.top_ids[at] if i >= 0] if trace.top_ids is not None else []
    texts = list(trace.top_tokens[at][: len(ids)])
    if chosen not in ids:
        ids.append(chosen)
        texts.append(trace.tokens[at])
    rank = rank_in(logprobs, chosen)
    rows = [{"id": i, "text": text, "model": float(model[i]), "new": float(new[i]), "chosen": i == chosen,
             "rank": rank_in(logprobs, i)} for i, text in zip(ids, texts, strict=True)]
    kept = int(np.count_nonzero(new > 0))
    return {
        "at": at,
        "settings": settings,
        "engine": engine,
        "rows": rows,
        "kept": kept,
        "differs": differs_line(logprobs, settings, engine, kept),
        "vocab": len(logprobs),
        "chosen": chosen,
        "rank": rank,
        "bands": bands_under(logprobs, chosen, settings, engine),
    }


def ranges_at(trace: Trace, at: int, settings: Settings, engine: str = "transformers") -> dict | None:
    """What the panel shows at token `at` of a server's trace: each alternative's p(model) and the range
    of its probability under `settings` in `engine`'s order (None: the response holds no alternatives there)."""
    if trace.top_logprobs is None:
        return None
    lps = np.asarray(trace.top_logprobs[at], dtype=np.float64)
    known = np.isfinite(lps)
    if not known.any():
        return None
    texts = [text for text, ok in zip(trace.top_tokens[at], known, strict=False) if ok]
    ranges = probability_ranges(lps[known], settings, engine)
    chosen = trace.tokens[at]
    rows = [{"text": text, "model": float(np.exp(lp)), "low": low, "high": high, "chosen": text == chosen}
            for text, lp, (low, high) in zip(texts, lps[known], ranges, strict=True)]
    return {"at": at, "settings": settings, "engine": engine, "rows": rows, "known": len(rows),
            "rest": max(0.0, 1.0 - float(np.exp(lps[known]).sum())),
            "chosen_p": float(np.exp(trace.logprobs[at])), "chosen_listed": any(r["chosen"] for r in rows)}
