"""The guessing game (Shannon 1951) for a class: guess the next token, then see what the model thought.

``game = lv.guess(text)`` scores `text` with a runner and shows it up to a starting point; the
class types the next token (or picks one of a few buttons), a wrong guess counts and asks again,
a right one, or *Reveal*, shows the token and the model's alternatives there. ``game.submit(text)``
and ``game.reveal()`` do the same from Python; ``game.results`` is a DataFrame per token played and
``game.summary()`` / ``game.chart()`` compare the class's guesses with the model's (its rank of the
token: the guesses a model needs that guesses in order of probability), per token and as Shannon's
bounds over the game. How a guess is matched and the bounds are computed is in
`logprob_viz.views.guess.scoring`.

Tokens are numbered from 1 wherever a person reads a number, as every view numbers them ("token 8
of 19"): `Outcome.token`, the ``token`` column of ``results``, the widget. The traits ``start`` and
``position`` are indices into ``game.trace.tokens`` (token number - 1), for Python's slicing.

The state lives in traits, so a saved notebook shows where the game was. The browser receives
only the tokens shown so far (``_payload``, through the wire codec) and the current buttons:
the hidden text is not on the page until it is revealed (only its length, to keep room for it).
"""

from __future__ import annotations

import dataclasses
import math
import random
import re

import traitlets as t

from ...records.trace import Trace
from ...records.trace_fields import is_int
from ..bundled import Bundled
from ..codec import encode_trace
from ..page import fallback_html
from .chart import chart
from .scoring import FEW_TOKENS, guessing_bits, matches, normalise, shannon_bounds

__all__ = ["guess", "GuessGame", "Outcome"]

DEFAULT_START_TOKENS = 8  # shown when the text has no first sentence to show
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s*$")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one guess (or a reveal) did at one token."""

    token: int  # the token's number, from 1 (as the widget's "token 8 of 19")
    guess: str | None  # None for a reveal
    correct: bool
    text: str | None  # the token's text, once found or revealed; None while it is still hidden
    n_guesses: int  # guesses made at this token so far

    def __str__(self) -> str:
        if self.guess is None:
            return f"token {self.token}: revealed {self.text!r} after {self.n_guesses} wrong guesses"
        if self.correct:
            guesses = f"{self.n_guesses} guess{'es' if self.n_guesses > 1 else ''}"
            return f"token {self.token}: right, {self.text!r} in {guesses}"
        return f"token {self.token}: {self.guess!r} is not it (guess {self.n_guesses}); try again or reveal"


def default_start(trace: Trace) -> int:
    """After the first sentence when one ends before the last token, else the first 8 tokens."""
    for i in range(1, len(trace) - 1):
        if _SENTENCE_END.search(trace.tokens[i]) and not trace.tokens[i + 1][:1].isalnum():
            return i + 1
    return max(1, min(DEFAULT_START_TOKENS, len(trace) - 1))


def _start_index(trace: Trace, start) -> int:
    n = len(trace)
    if start is None:
        return default_start(trace)
    if isinstance(start, str):
        shown = ""
        for i, token in enumerate(trace.tokens):
            shown += token
            if shown == start and 0 < i + 1 < n:
                return i + 1
        raise ValueError(f"start={start!r} does not end on a token boundary of the text; give a prefix that ends "
                         f"between two tokens, or a token index (1 to {n - 1})")
    if not is_int(start) or not 1 <= start < n:
        raise ValueError(f"start must be a token index from 1 to {n - 1} (the first token to guess), a prefix of the "
                         f"text, or None, got {start!r}")
    return start


def guess(text, start=None, runner=None, top_logprobs: int = 10, choices: int = 4,
          case_sensitive: bool = True) -> GuessGame:
    """The guessing game on `text` (a str, scored by `runner`, or an already scored `Trace`).

    Parameters
    ----------
    start : int, str or None
        Where the hidden part begins: a token index, a prefix of the text ending between two
        tokens, or None for the first sentence (or the first 8 tokens when no sentence ends).
    runner : optional
        What scores the text (``lv.load()``, ``lv.connect(url)``); None: the default model.
    top_logprobs : int
        Alternatives recorded per token, shown in the chart once a token is revealed.
    choices : int
        Buttons to pick from: the real token among the model's most likely others, shuffled;
        0 for none (only typing, as in Shannon's experiment). Buttons make it a multiple-choice
        game, which needs fewer guesses.
    case_sensitive : bool
        Whether "The" and "the" are different guesses (leading/trailing whitespace never counts).

    Returns
    -------
    GuessGame
        The widget; ``game.results`` records per token the class's guesses beside the model's
        (its rank of the real token) and the model's probability; ``game.summary()`` has Shannon's
        1951 bounds on bits per token from the class's guess numbers and from the model's ranks,
        over the same tokens. See `logprob_viz.views.guess.scoring`.
    """
    if isinstance(text, Trace):
        trace = text
    elif isinstance(text, str) and text.strip():
        if runner is None:
            # (the local runner: torch and a model, loaded only where no runner is given)
            from ...sources.local.loading import default_runner

            runner = default_runner()
        trace = runner.score(text, top_logprobs=top_logprobs, progress=False)
    else:
        raise TypeError(f"guess takes the text to play (a non-empty str) or a scored Trace, got {text!r:.60}")
    if len(trace) < 2:
        raise ValueError(f"the text has {len(trace)} token(s): the game needs at least two (one shown, one to guess)")
    return GuessGame(trace, start=start, choices=choices, case_sensitive=case_sensitive)


class GuessGame(Bundled, bundle="guess"):
    """The guessing game's widget and its record (build it with `lv.guess`).

    Attributes
    ----------
    position : int
        The token being guessed (its index); ``n_tokens`` once every token is shown.
    guesses : list of str
        The wrong guesses at this token so far.
    choices : list of str
        The buttons at this token.
    rows : list of dict
        One per token played (what `results` holds, JSON-safe).
    """

    _payload = t.Dict().tag(sync=True)  # the tokens shown so far (codec.encode_trace)
    start = t.Int(1).tag(sync=True)
    n_tokens = t.Int(0).tag(sync=True)
    position = t.Int(1).tag(sync=True)
    guesses = t.List(t.Unicode()).tag(sync=True)
    choices = t.List(t.Unicode()).tag(sync=True)
    rows = t.List(t.Dict()).tag(sync=True)
    last = t.Dict(allow_none=True, default_value=None).tag(sync=True)  # the last Outcome, for the feedback line
    stats = t.Dict().tag(sync=True)  # summary()
    case_sensitive = t.Bool(True).tag(sync=True)
    # The whole text's length in characters and its line breaks, not its characters: the page keeps
    # room for the whole text from the start, so that a token found never pushes the box to type in.
    text_shape = t.Dict().tag(sync=True)

    def __init__(self, trace: Trace, start=None, choices: int = 4, case_sensitive: bool = True) -> None:
        if not isinstance(trace, Trace) or len(trace) < 2:
            raise ValueError("GuessGame plays a scored Trace of at least two tokens; lv.guess(text) makes one")
        start = _start_index(trace, start)
        if not is_int(choices) or choices < 0:
            raise ValueError(f"choices must be an int >= 0 (0: no buttons), got {choices!r}")
        self._trace = dataclasses.replace(trace, prompt_len=start)  # shown context = prompt, hidden = completion
        self._n_choices = choices
        self._records: list[dict] = []  # per token played: what the class did, what the model gave
        text = "".join(trace.tokens)
        shape = {"chars": len(text), "lines": text.count("\n")}
        super().__init__(start=start, n_tokens=len(trace), position=start, case_sensitive=case_sensitive,
                         text_shape=shape)
        self._show()
        self.on_msg(self._on_message)

    # -- playing ------------------------------------------------------------------------------

    @property
    def trace(self) -> Trace:
        """The whole scored text (shown context as the prompt)."""
        return self._trace

    @property
    def played(self) -> Trace:
        """The text shown so far: the context (as the prompt) and the tokens found or revealed."""
        return self._trace[: self.position]

    @property
    def done(self) -> bool:
        return self.position >= self.n_tokens

    def submit(self, text: str) -> Outcome:
        """Guess the next token (what the text box does): right shows it, wrong counts and asks again.

        A guess matches when it equals the token's text with leading and trailing whitespace
        removed (case-sensitive unless the game says otherwise); repeating a wrong guess does
        not count again. An empty guess names a whitespace-only token (a newline, a space).
        """
        if not isinstance(text, str):
            raise TypeError(f"a guess is the text of the next token (a str), got {type(text).__name__}")
        i = self._playing()
        token = self._trace.tokens[i]
        tried = [normalise(g, self.case_sensitive) for g in self.guesses]
        if matches(text, token, self.case_sensitive):
            outcome = Outcome(i + 1, text, True, token, len(self.guesses) + 1)
            self._finish(i, [*self.guesses, text], revealed=False, outcome=outcome)
            return outcome
        if normalise(text, self.case_sensitive) not in tried:
            self.guesses = [*self.guesses, text]
        outcome = Outcome(i + 1, text, False, None, len(self.guesses))
        self.last = dataclasses.asdict(outcome)
        return outcome

    def reveal(self) -> Outcome:
        """Give up on the next token: it is shown, with the wrong guesses so far (the Reveal button)."""
        i = self._playing()
        outcome = Outcome(i + 1, None, False, self._trace.tokens[i], len(self.guesses))
        self._finish(i, list(self.guesses), revealed=True, outcome=outcome)
        return outcome

    def _playing(self) -> int:
        if self.done:
            raise ValueError(f"the game is over: all {self.n_tokens} tokens are shown; game.results has the table "
                             "and game.summary() the totals")
        return self.position

    def _finish(self, i: int, guesses: list[str], revealed: bool, outcome: Outcome) -> None:
        p = float(math.exp(self._trace.logprobs[i]))  # NaN when the source gave no logprob there (a server's trace)
        row = {
            "token": i + 1,
            "text": self._trace.tokens[i],
            "guesses": guesses,
            "class_guesses": len(guesses),  # found: the guesses it took; revealed: the wrong ones (it took more)
            "revealed": revealed,
            "model_guesses": int(self._trace.ranks[i]),  # its rank; 0 where the source gave none
            "model_prob": p,
            "model_bits": math.nan if math.isnan(p) else (-math.log2(p) if p > 0 else math.inf),
        }
        with self.hold_sync():
            self._records = [*self._records, row]
            self.position = i + 1
            self.guesses = []
            self.last = dataclasses.asdict(outcome)
            self._show()

    def _show(self) -> None:
        """Send what the page may see: the tokens so far, the buttons, the table and its totals."""
        self._payload = encode_trace(self.played, f"guess-{self.position}")
        self.choices = self._choices_at(self.position) if not self.done else []
        self.rows = [_json_row(r) for r in self._records]
        self.stats = _json_row(self.summary())

    def _choices_at(self, i: int) -> list[str]:
        if self._n_choices == 0:
            return []
        token = self._trace.tokens[i]
        picked, seen = [token], {normalise(token, self.case_sensitive)}
        for alt in self._trace.top_tokens[i]:
            key = normalise(alt, self.case_sensitive)
            if len(picked) >= self._n_choices:
                break
            if key not in seen:
                seen.add(key)
                picked.append(alt)
        random.Random(i).shuffle(picked)  # the same buttons on every run; the answer not always first
        return picked

    def _on_message(self, _widget, content, _buffers) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        try:
            if kind == "guess":
                self.submit(str(content.get("text", "")))
            elif kind == "reveal":
                self.reveal()
        except ValueError as error:
            self.send({"type": "error", "message": str(error)})

    # -- the record -----------------------------------------------------------------------------

    @property
    def results(self):
        """A pandas DataFrame, one row per token played: token (its number, from 1, as the widget
        numbers it), text, guesses (list), class_guesses, revealed, model_guesses, model_prob,
        model_bits.

        ``class_guesses`` is the number of guesses the class made there, the right one included;
        for a revealed token all of them were wrong: it took more than that. ``model_guesses`` is
        the model's rank of the token (1: its first choice), the guesses a model needs that
        guesses in order of probability; 0 where the source gave no rank. ``model_bits`` is
        -log2 p(token) under the model.
        """
        import pandas as pd  # optional (the dev extra): only this table needs it

        columns = ["token", "text", "guesses", "class_guesses", "revealed", "model_guesses", "model_prob", "model_bits"]
        return pd.DataFrame(self._records, columns=columns)

    def summary(self) -> dict:
        """The game's totals: tokens played (``n``), found, revealed, found at the first guess, to play;
        its score over the tokens found, the mean log2(guesses) per token in bits (``class_score``;
        0: every token at the first guess, fewer guesses is less; revealed tokens are not scored) and
        the model's over the same tokens, its rank as its guesses (``model_score``, over the
        ``model_scored`` of them with a rank); Shannon's
        bounds on the text's entropy in bits per token from the class's guess numbers (``class_lower`` /
        ``class_upper``, over all ``n`` tokens played, a revealed one as "more than k guesses") and
        from the model's ranks over the same tokens (``model_lower`` / ``model_upper``, over the
        ``model_n`` of them with a known rank); the model's mean -log2 p over them (``model_bits``);
        ``few``: under `FEW_TOKENS` found tokens, too few for the bounds to mean much."""
        rows = self._records
        found = [r["class_guesses"] for r in rows if not r["revealed"]]
        revealed_after = [r["class_guesses"] for r in rows if r["revealed"]]
        class_lower, class_upper = shannon_bounds(found, revealed_after)
        ranks = [r["model_guesses"] for r in rows if r["model_guesses"] > 0]
        found_ranks = [r["model_guesses"] for r in rows if r["model_guesses"] > 0 and not r["revealed"]]
        model_lower, model_upper = shannon_bounds(ranks)
        bits = [r["model_bits"] for r in rows if not math.isnan(r["model_bits"])]
        return {
            "n": len(rows),
            "found": len(found),
            "revealed": len(revealed_after),
            "first_guess": found.count(1),
            "to_play": self.n_tokens - self.position,
            "class_score": guessing_bits(found),
            "model_score": guessing_bits(found_ranks),
            "model_scored": len(found_ranks),
            "class_lower": class_lower,
            "class_upper": class_upper,
            "model_n": len(ranks),
            "model_lower": model_lower,
            "model_upper": model_upper,
            "model_bits": sum(bits) / len(bits) if bits else math.nan,
            "few": len(found) < FEW_TOKENS,
        }

    def chart(self):
        """The class's guesses beside the model's per token, Shannon's bounds in the title: a plotly
        figure when plotly is installed, else an SVG table."""
        return chart(self._records, self.summary())

    def fallback_html(self) -> str:
        """Where no widget manager runs the game (nbconvert, a notebook opened without a kernel): the
        text played so far as its LogprobView's HTML (`page.fallback_html`): what the class saw, the
        hidden rest not on the page."""
        return fallback_html(self.played)

    def __repr__(self) -> str:
        s = self.summary() if hasattr(self, "_trace") else {}
        return (f"<GuessGame token {self.position + 1} of {self.n_tokens}: {s.get('found', 0)} found, "
                f"{s.get('revealed', 0)} revealed>")


def _json_row(row: dict) -> dict:
    """A row as the trait holds it: non-finite floats as None (JSON has none)."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}
