"""The probability of given answers: `lv.Choices`, what ``runner.choose(prompt, options)`` returns.

For each prompt (one, or a row per prompt of a list) and each option, the option's tokens were
scored teacher-forced after the prompt; the record keeps each option's trace and the sum of its
tokens' logprobs, and derives the rest: ``probs`` is a softmax over the options of the sums
(``length="sum"``: the probability of the whole option, renormalised over the options given) or
of the length-normalised scores (``"per_token"``: the sum over the option's token count;
``"per_char"``: over its characters, lm-eval's ``acc_norm``; ``"per_byte"``: over its UTF-8
bytes, lm-eval's ``acc_bytes``; both without the option's leading whitespace, the separator
lm-eval's ``target_delimiter`` adds and does not count). The two differ for non-ASCII options
("Kraków" is 6 characters, 7 bytes). With ``gold`` (the right option of each prompt) it knows which
rows were answered right, and `calibration` bins the confidence against that.
"""

from __future__ import annotations

import numpy as np

from .calibration import calibration
from .corpus import Corpus
from .trace import Trace
from .trace_fields import is_int
from .viewable import Viewable, show

__all__ = ["Choices", "LENGTHS", "check_length", "option_bytes", "option_chars"]

# how options of different lengths are compared (the `length=` of runner.choose)
LENGTHS = ("sum", "per_token", "per_char", "per_byte")


def check_length(length) -> str:
    if length not in LENGTHS:
        raise ValueError(f"length must be one of {', '.join(map(repr, LENGTHS))} (how options of different lengths "
                         "compare: the whole option's logprob, per token, per character as lm-eval's acc_norm, per "
                         f"UTF-8 byte as its acc_bytes), got {length!r}")
    return length


def option_chars(option: str) -> int:
    """The characters `per_char` divides by: the option's characters (code points, Python's ``len``)
    without its leading whitespace, as lm-eval 0.4.13's acc_norm divides by ``len(choice)``, the choice
    without the ``target_delimiter`` (a space) put before it; at least 1."""
    return max(len(option.lstrip()), 1)


def option_bytes(option: str) -> int:
    """The bytes `per_byte` divides by: the option's UTF-8 bytes without its leading whitespace, as
    lm-eval 0.4.13's acc_bytes divides by ``len(choice.encode("utf-8"))``; at least 1."""
    return max(len(option.lstrip().encode("utf-8")), 1)


class Choices(Viewable):
    """Given options after one prompt or each of many: their logprobs, probabilities and traces.

    Made by ``runner.choose(prompt, options)``. For one prompt, ``logprobs`` and ``probs`` are
    dicts option -> float and ``traces`` a list (one trace per option); for a list of prompts, the
    dicts hold an array per option (one value per prompt), ``traces`` a list per prompt, and
    ``choices[i]`` is prompt ``i``'s own `Choices`.

    Attributes
    ----------
    options : list of str
    prompts : list of str
        Each prompt's text (the chat-templated text for ``messages``).
    length : str
        What ``probs`` normalised: ``"sum"``, ``"per_token"``, ``"per_char"`` or ``"per_byte"``.
    gold : numpy int array [R] or None
        The index of each prompt's right option, when given.
    meta : dict
        Model, source, timing.
    """

    def __init__(self, prompts, options, traces, sums, *, length: str = "sum", gold=None, single: bool = False,
                 meta: dict | None = None):
        self.prompts = [str(p) for p in prompts]
        self.options = [str(o) for o in options]
        self.trace_rows = [list(row) for row in traces]  # [R][N]
        self._sums = np.asarray(sums, dtype=np.float64).reshape(len(self.prompts), len(self.options))  # (R, N)
        if any(len(row) != len(self.options) for row in self.trace_rows) or len(self.trace_rows) != len(self.prompts):
            raise ValueError("give one trace per prompt and option")
        if any(not isinstance(t, Trace) for row in self.trace_rows for t in row):
            raise TypeError("Choices holds Traces, one per prompt and option")
        self.length = check_length(length)
        self.gold = None if gold is None else check_gold(gold, self.options, len(self.prompts))
        self._single = bool(single) and len(self.prompts) == 1
        self.meta = dict(meta or {})

    # -- numbers -------------------------------------------------------------------------

    @property
    def n_tokens(self) -> np.ndarray:
        """(R, N) how many tokens each option has after its prompt."""
        return np.array([[len(t) - t.prompt_len for t in row] for row in self.trace_rows], dtype=np.int64)

    @property
    def scores(self) -> np.ndarray:
        """(R, N) what ``probs`` is a softmax of: the sums, or the sums per token / character / byte."""
        if self.length == "per_token":
            return self._sums / self.n_tokens
        if self.length in ("per_char", "per_byte"):
            count = option_chars if self.length == "per_char" else option_bytes
            return self._sums / np.array([count(o) for o in self.options], dtype=np.float64)
        return self._sums

    @property
    def prob_table(self) -> np.ndarray:
        """(R, N) each row's softmax of `scores` over the options (rows sum to 1)."""
        scores = self.scores
        shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    @property
    def logprob_table(self) -> np.ndarray:
        """(R, N) each option's sum of token logprobs after its prompt."""
        return self._sums.copy()

    @property
    def logprobs(self) -> dict:
        """option -> the sum of its tokens' logprobs (a float; an array over the prompts for a list)."""
        return self._by_option(self._sums)

    @property
    def probs(self) -> dict:
        """option -> its probability normalised over the options (a float, or an array over the prompts)."""
        return self._by_option(self.prob_table)

    @property
    def predicted(self):
        """The most likely option (per prompt for a list)."""
        best = [self.options[j] for j in self.prob_table.argmax(axis=1)]
        return best[0] if self._single else best

    @property
    def confidence(self):
        """The probability of the predicted option (per prompt for a list)."""
        top = self.prob_table.max(axis=1)
        return float(top[0]) if self._single else top

    @property
    def correct(self):
        """Whether the predicted option is the gold one (per prompt); None without gold."""
        if self.gold is None:
            return None
        right = self.prob_table.argmax(axis=1) == self.gold
        return bool(right[0]) if self._single else right

    @property
    def traces(self) -> list:
        """One trace per option (prompt + option, ``prompt_len`` marks the prompt); a list per prompt for a list."""
        return list(self.trace_rows[0]) if self._single else [list(row) for row in self.trace_rows]

    def _by_option(self, table: np.ndarray) -> dict:
        if self._single:
            return {o: float(table[0, j]) for j, o in enumerate(self.options)}
        return {o: table[:, j].copy() for j, o in enumerate(self.options)}

    def calibration(self, bins: int = 10):
        """The reliability of the confidence against the gold answers (`lv.calibration`); needs ``gold``."""
        if self.gold is None:
            raise ValueError("calibration compares the confidence with the right answers: give them, "
                             "runner.choose(prompts, options, gold=[...])")
        return calibration(np.atleast_1d(self.confidence), np.atleast_1d(self.correct), bins=bins, items=self)

    # -- sequence and tables -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.prompts)

    def __getitem__(self, i) -> Choices:
        """Prompt ``i``'s own Choices (a slice or a list of rows gives a Choices of those rows)."""
        if is_int(i):
            rows = [range(len(self))[i]]
            single = True
        else:
            rows = list(range(len(self))[i]) if isinstance(i, slice) else [int(r) for r in i]
            single = False
        return Choices([self.prompts[r] for r in rows], self.options, [self.trace_rows[r] for r in rows],
                       self._sums[rows], length=self.length, single=single, meta=self.meta,
                       gold=None if self.gold is None else self.gold[rows])

    def to_pandas(self):
        """One row per prompt: prompt, a probability column per option (named by its text),
        predicted, confidence, and gold and correct when gold was given."""
        import pandas as pd  # optional dependency: only the table needs it

        table = self.prob_table
        columns = {"prompt": self.prompts}
        for j, option in enumerate(self.options):
            columns[option] = table[:, j]
        columns["predicted"] = [self.options[j] for j in table.argmax(axis=1)]
        columns["confidence"] = table.max(axis=1)
        if self.gold is not None:
            columns["gold"] = [self.options[g] for g in self.gold]
            columns["correct"] = table.argmax(axis=1) == self.gold
        return pd.DataFrame(columns).rename_axis("item")

    def to_corpus(self):
        """An `lv.Corpus` with a trace per prompt (its predicted option's), labelled by the gold option
        (or the predicted one without gold), with predicted, confidence, gold and correct as metadata:
        the corpus view sorts and filters by them."""
        table = self.prob_table
        best = table.argmax(axis=1)
        metadata = []
        for r in range(len(self)):
            row = {"index": r, "predicted": self.options[best[r]], "confidence": float(table[r, best[r]])}
            if self.gold is not None:
                row.update(gold=self.options[self.gold[r]], correct=bool(best[r] == self.gold[r]))
            metadata.append(row)
        labels = [m.get("gold", m["predicted"]) for m in metadata]
        return Corpus([self.trace_rows[r][best[r]] for r in range(len(self))], labels=labels, metadata=metadata,
                      meta={"mode": "choose", **self.meta})

    # -- display ---------------------------------------------------------------------------

    def view(self, **traits):
        """The choices view: the options as bars (per prompt), each opening its tokens in a LogprobView."""
        return show(self, "view", **traits)

    def __repr__(self) -> str:
        if self._single:
            shown = ", ".join(f"{o!r}: {p:.3f}" for o, p in self.probs.items())
            return f"<Choices {{{shown}}} length={self.length}>"
        right = "" if self.gold is None else f", accuracy={float(np.mean(self.correct)):.3f}"
        return f"<Choices of {len(self)} prompts x {len(self.options)} options, length={self.length}{right}>"


def check_gold(gold, options: list[str], n: int) -> np.ndarray:
    """Gold answers as option indices: an option's text or index per prompt (one value for one prompt)."""
    values = [gold] if isinstance(gold, (str, int, np.integer)) else list(gold)
    if len(values) != n:
        raise ValueError(f"give one gold answer per prompt: {n} prompts, {len(values)} gold answers")
    out = []
    for i, g in enumerate(values):
        if isinstance(g, str):
            if g not in options:
                raise ValueError(f"gold answer {i} is {g!r}, which is not one of the options {options!r}; "
                                 "give an option's text or its index")
            out.append(options.index(g))
        elif is_int(g) and 0 <= g < len(options):
            out.append(int(g))
        else:
            raise ValueError(f"gold answer {i} is {g!r}: give an option's text or its index (0 to {len(options) - 1})")
    return np.array(out, dtype=np.int64)
