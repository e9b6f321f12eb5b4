"""The notebook widget: a trace's text as a heatmap of token probabilities, growing as it streams.

`LogprobView(trace)` shows each token coloured by its probability; hovering a token shows a
bar chart of the top-K alternatives the model weighed. The frontend is the esbuild bundle of
``js/`` in ``logprob_viz/views/static``. What crosses to the browser is one trait, ``_payload``,
written by the wire codec (`logprob_viz.views.codec`): a new trace is one message and one rebuild.

A growing trace (``view.trace = longer`` where ``longer`` extends the trace on show, or
``view.append(more)``) crosses as custom messages carrying only the new tokens, sent at least
every ``BATCH_S`` while tokens arrive; once tokens stop for ``FOLD_S``, the whole trace is
folded into ``_payload`` so that saved widget state holds every token (the browser, which
already has them, does not rebuild).
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid

import traitlets as t

from ...records.trace import Trace
from ..bundled import Bundled, checked_size
from ..codec import append_start, encode_append, encode_trace, extends, flag_notes, json_safe, message, summary
from ..defaults import UPDATE_S, settings
from ..export_svg import to_svg
from ..lens.view import decided_traits
from ..page import FALLBACK_MAX_STATE_BYTES, script_fragment, view_page
from ..plots import plot
from .attribution import answer_why, encode_attribution
from .served import follow_audits, served_state

__all__ = ["LogprobView", "encode_trace"]

logger = logging.getLogger(__name__)

BATCH_S = UPDATE_S  # while tokens arrive, new ones reach the browser at least this often
FOLD_S = 0.5  # this long without new tokens ends a stream: the whole trace goes into _payload

_MODES = ("probability", "logprob", "entropy", "rank", "ratio", "decided")
_MODE_ALIASES = {"surprisal": "logprob", "prob": "probability"}
_PALETTES = ("viridis", "cividis", "magma")


def _checked(trace) -> Trace:
    if not isinstance(trace, Trace):
        raise TypeError(f"LogprobView shows a logprob_viz.Trace, got {type(trace).__name__}; "
                        "make one with lv.generate(...), lv.score(...) or lv.from_openai(...)")
    return trace


class LogprobView(Bundled, bundle="widget"):
    """A trace shown as a heatmap of token probabilities, with the alternatives on hover.

    A served trace also shows what its numbers are (`served.py`): `lv.audit`'s verdict as a badge.

    Parameters
    ----------
    trace : Trace
        What to show. Assigning ``view.trace = other`` shows another trace; when ``other``
        extends the trace on show (a stream's next snapshot), only the new tokens are sent.
    **kwargs
        Trait values, e.g. ``selected=5``.

    Attributes
    ----------
    selected : int
        The pinned token's index, -1 for none. Clicking a token pins it (and sets this trait);
        arrow keys move it, Escape releases it; setting it from Python pins that token.
    color_mode : str
        What colours a token: ``"probability"``, ``"logprob"`` (surprisal, −logprob in nats;
        ``"surprisal"`` is accepted), ``"entropy"``, ``"rank"`` (GLTR's buckets: top 1 / 10 /
        100 / 1000) or ``"ratio"`` (p / p(top-1)).
    color_range : list of two floats or None
        The legend's [min, max] (values outside are clamped); None: the mode's default.
    palette : str
        ``"viridis"``, ``"cividis"`` or ``"magma"``: all perceptually uniform and colour-blind safe.
    show_ids : bool
        Show token ids in the alternatives chart.
    size : str
        ``"normal"`` or ``"projector"``: everything (tokens, header, legend, labels, chart) at 1.25
        times, the muted text at full contrast, for a class. New views start with
        ``lv.settings.size``; the view's own control changes it too.
    branching : bool
        Whether clicking an alternative asks the kernel to branch there (the explorer sets it).
    runner : a local runner or None
        The model that made the trace: with one, a pinned token's "why?" (or `w`) asks it which
        earlier tokens pushed towards that token (`runner.attribute`). Settable.
    attributions : list of dict
        Every attribution computed for this view (`logprob_viz.views.logprob.attribution`), kept in
        the saved state and the offline HTML; ``view.add_attribution(attr)`` adds one from Python.
    why_active : str
        The key of the attribution colouring the text ("" for none; unpinning clears it).
    why_timeout_s : float
        How long the view waits for the kernel's answer before saying there was none.
    lens : Lens or None
        With ``LogprobView(lens.trace, lens=lens)``, the ``"decided"`` colour mode colours each token
        by the layer from which it stays the top guess (``lens.commitment(top=1)``).
    n_tokens, k, prompt_len, perplexity, mean_logprob, mean_entropy, meta, flag_notes
        Read-only summaries of the trace on show (None where unknown).
    """

    _payload = t.Dict().tag(sync=True)  # logprob_viz.views.codec.encode_trace
    selected = t.Int(-1).tag(sync=True)
    color_mode = t.Unicode("probability").tag(sync=True)
    color_range = t.List(t.Float(), default_value=None, allow_none=True, minlen=2, maxlen=2).tag(sync=True)
    palette = t.Enum(_PALETTES, default_value="viridis").tag(sync=True)
    show_ids = t.Bool(False).tag(sync=True)
    size = t.Unicode("normal").tag(sync=True)  # the presentation size (logprob_viz.views.defaults)
    # Clicking an alternative (or `b` on a pinned token) asks the kernel to branch there: a custom
    # message {"event": "alternative", "at", "token_id", "token"} for whoever listens (the explorer).
    branching = t.Bool(False).tag(sync=True)

    # "why?": attributions computed (logprob_viz.views.logprob.attribution), the one on show, whether
    # there is a runner to ask (can_why) and how long the browser waits for an answer.
    attributions = t.List(t.Dict()).tag(sync=True)
    why_active = t.Unicode("").tag(sync=True)
    can_why = t.Bool(False).tag(sync=True)
    why_timeout_s = t.Float(60.0).tag(sync=True)
    # The "decided" colour mode: lens.commitment(top=1) as an int32 array, and the lens's blocks.
    _decided = t.Dict(default_value=None, allow_none=True).tag(sync=True)
    _served = t.Dict().tag(sync=True)  # lv.audit's badge, what the numbers are (served.py)
    decided_blocks = t.Int(0).tag(sync=True)

    _timer: threading.Timer | None = None  # the pending batch or fold of a stream

    def __init__(self, trace: Trace, *, runner=None, lens=None, **kwargs) -> None:
        trace = _checked(trace)
        self._trace = trace
        self._trace_id = uuid.uuid4().hex
        self._sent_n = len(trace)  # tokens the browser has (payload + appends)
        self._last_send = 0.0
        self._lock = threading.RLock()
        self._runner = runner
        self.lens = lens
        decided = {} if lens is None else decided_traits(lens, trace)
        kwargs.setdefault("size", settings.size)
        # The payload in the constructor: the view opens with it in one message.
        super().__init__(_payload=encode_trace(trace, self._trace_id), can_why=runner is not None,
                         _served=served_state(trace), **decided, **kwargs)
        self.on_msg(self._on_why)
        follow_audits(self)  # a later lv.audit of the trace on show redraws the badge

    # -- why? ------------------------------------------------------------------------------

    @property
    def runner(self):
        """The model asked by "why?" (None: no "why?" is drawn, unless attributions were added to show)."""
        return self._runner

    @runner.setter
    def runner(self, runner) -> None:
        self._runner = runner
        # attribution runs the model backwards: a model in this process only, not a server runner
        self.can_why = bool(getattr(getattr(runner, "capabilities", None), "in_process", False))

    def add_attribution(self, attr, show: bool = True) -> None:
        """Keep an `Attribution` of this view's trace (from ``runner.attribute``) and, with `show`,
        pin its token and colour the text by it."""
        ids = [int(i) for i in self._trace.token_ids[: attr.position + 1]]
        if attr.position >= len(self._trace) or ids != [*attr.token_ids.tolist(), attr.target_id]:
            raise ValueError(f"this attribution is of another text (its token {attr.position}, {attr.target!r}, "
                             "and the tokens before it are not this view's): attribute this view's trace")
        encoded = encode_attribution(attr)
        self.attributions = [*[a for a in self.attributions if a["key"] != encoded["key"]], encoded]
        if show:
            with self.hold_sync():
                self.selected = encoded["at"]
                self.why_active = encoded["key"]

    def _on_why(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or content.get("type") != "why":
            return
        self.send(answer_why(self, content))

    # -- the trace -------------------------------------------------------------------------

    @property
    def trace(self) -> Trace:
        """The trace on show (including tokens not yet sent)."""
        return self._trace

    @trace.setter
    def trace(self, trace: Trace) -> None:
        trace = _checked(trace)
        with self._lock:
            if len(trace) >= len(self._trace) and extends(trace, self._trace):
                self._grow(trace)
            else:
                self._replace(trace)

    def append(self, more: Trace) -> None:
        """Show more tokens: `more` is either a longer trace that extends the one on show, or
        the tokens that follow it (e.g. ``runner.generate(...)`` of a continuation's completion).
        Only the new tokens cross to the browser."""
        more = _checked(more)
        with self._lock:
            longer = more if len(more) >= len(self._trace) and extends(more, self._trace) else None
            longer = longer or Trace.concat(self._trace, more)
            if extends(longer, self._trace):
                self._grow(longer)
            else:  # a wider K than the view's: the whole trace again
                self._replace(longer)

    def flush(self) -> None:
        """Send the tokens not sent yet and put the whole trace into the saved state now."""
        with self._lock:
            self._cancel_timer()
            self._send_pending()
            self._fold()

    def _replace(self, trace: Trace) -> None:
        self._cancel_timer()
        self._trace = trace
        self._trace_id, self._sent_n = uuid.uuid4().hex, len(trace)
        with self.hold_sync():
            self.set_trait("selected", -1)  # the pinned index may not exist in the new trace
            self.set_trait("why_active", "")
            self.set_trait("attributions", [])  # they were of the trace replaced
            self.set_trait("_payload", encode_trace(trace, self._trace_id))
            self.set_trait("_served", served_state(trace))

    def _grow(self, trace: Trace) -> None:
        self._trace = trace
        if len(trace) == self._sent_n:
            return
        wait = self._last_send + BATCH_S - time.monotonic()
        if wait <= 0:
            self._send_pending()
            self._arm(FOLD_S)
        else:
            self._arm(wait)

    def _send_pending(self) -> None:
        trace = self._trace
        if len(trace) == self._sent_n:
            return
        start = append_start(trace, self._sent_n)
        content, buffers = message("append", encode_append(trace, start, self._trace_id))
        self.send(content, buffers=buffers)
        self._sent_n = len(trace)
        self._last_send = time.monotonic()

    def _fold(self) -> None:
        if self._payload.get("n") != len(self._trace) or self._payload.get("id") != self._trace_id:
            self.set_trait("_payload", encode_trace(self._trace, self._trace_id))

    def _arm(self, delay: float) -> None:
        self._cancel_timer()
        self._timer = threading.Timer(delay, self._tick)
        self._timer.daemon = True
        self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        # On the timer's thread: the kernel's IOPub socket takes messages from any thread.
        with self._lock:
            self._timer = None
            try:
                if len(self._trace) > self._sent_n:
                    self._send_pending()
                    self._arm(FOLD_S)
                else:
                    self._fold()
            except Exception:  # noqa: BLE001 - a closed comm (the view was closed) ends the stream
                logger.debug("the view's stream stopped", exc_info=True)

    def close(self) -> None:
        self._cancel_timer()
        super().close()

    # -- read-only summaries -----------------------------------------------------------------

    @property
    def n_tokens(self) -> int:
        return len(self._trace)

    @property
    def k(self) -> int:
        return self._trace.k

    @property
    def prompt_len(self) -> int:
        return self._trace.prompt_len

    @property
    def perplexity(self) -> float | None:
        return summary(self._trace)["perplexity"]

    @property
    def mean_logprob(self) -> float | None:
        return summary(self._trace)["mean_logprob"]

    @property
    def mean_entropy(self) -> float | None:
        return summary(self._trace)["mean_entropy"]

    @property
    def meta(self) -> dict:
        return json_safe(self._trace.meta)

    @property
    def flag_notes(self) -> dict[str, list[str]]:
        """{token index: what the trace's source lost there, in words} (Trace.flags), sparse."""
        return flag_notes(self._trace)

    # -- checks --------------------------------------------------------------------------------

    @t.validate("selected")
    def _check_selected(self, proposal):
        value = proposal["value"]
        n = len(self._trace)
        if not -1 <= value < max(n, 0):
            raise t.TraitError(f"selected must be -1 (none) or a token index between 0 and {n - 1}, got {value}")
        return value

    @t.validate("color_mode")
    def _check_color_mode(self, proposal):
        value = _MODE_ALIASES.get(proposal["value"], proposal["value"])
        if value not in _MODES:
            raise t.TraitError(
                f"color_mode must be one of {', '.join(_MODES)} (or 'surprisal'), got {proposal['value']!r}"
            )
        if value == "decided" and self._decided is None:
            raise t.TraitError(
                "color_mode 'decided' needs the trace's lens: LogprobView(lens.trace, lens=lens) "
                "with lens = runner.lens(text)"
            )
        return value

    _check_size = t.validate("size")(checked_size)

    @t.validate("color_range")
    def _check_color_range(self, proposal):
        value = proposal["value"]
        if value is not None and not (math.isfinite(value[0]) and math.isfinite(value[1]) and value[0] < value[1]):
            raise t.TraitError(f"color_range must be [min, max] with finite min < max, or None, got {value}")
        return value

    def to_svg(self, **options) -> str:
        """The view as SVG text: its trace in its colour mode, palette and range, the pinned token's
        alternatives beside it (see `logprob_viz.views.export_svg.to_svg`; ``options`` override)."""
        pinned = self.selected if self.selected >= 0 else None
        settings = dict(color_mode=self.color_mode, palette=self.palette, color_range=self.color_range, pinned=pinned)
        return to_svg(self._trace, **{**settings, **options})

    def to_html(self, path=None, *, title: str | None = None):
        """This view as one standalone, offline page, with its colour mode, palette, range, size and
        pinned token: written to `path` (and the path returned), or returned as a string without one.
        (``trace.to_html`` knows no view: it shows the trace in a new view's defaults.)"""
        return view_page(self, path, title=title)

    # -- the page protocol (`logprob_viz.views.page`) and the linked figure's (`plot_link`) --------

    def page_html(self, max_state_bytes: int | None = None) -> str:
        """This view with its own script (~45 KB, plus 4/3 of the state; beyond `max_state_bytes`: a note)."""
        return script_fragment(self, box="lv-standalone", css="widget.css", script="standalone.js",
                               text=repr(self._trace), large_note=_NOTE_LARGE, max_state_bytes=max_state_bytes)

    def page_title(self) -> str:
        return f"logprob_viz: {self._trace.meta.get('model', 'trace')}"

    def plot(self, kind: str = "surprisal", **kwargs):
        """The trace's figure for `logprob_viz.link` (point i is token i; see `plots.plot`)."""
        return plot(self._trace, kind, **kwargs)

    pin_count = n_tokens  # how many items a linked figure's click can pin: the tokens

    def fallback_html(self) -> str:
        """Where no widget manager renders the view (nbconvert's HTML, notebook viewers): the same view
        as self-contained HTML, or a note beyond `page.FALLBACK_MAX_STATE_BYTES` of state."""
        return self.page_html(max_state_bytes=FALLBACK_MAX_STATE_BYTES)

    def __repr__(self) -> str:
        trace = getattr(self, "_trace", None)
        return f"LogprobView({trace!r})" if trace is not None else object.__repr__(self)


_NOTE_LARGE = ("(logprob_viz: this trace is too large to embed in the notebook as HTML; "
               "export it with lv.to_html(trace, 'trace.html'))")

