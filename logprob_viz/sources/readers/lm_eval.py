"""`lv.read_lm_eval(path)`: the samples file that ``lm_eval --log_samples`` writes, for a multiple-choice
task, as an `lv.Choices` with gold, so calibration, the choices view and the corpus view work on a real
evaluation run.

lm-eval 0.4.13 writes one JSON line per document (``EvaluationTracker.save_results_samples``, from the
``example`` dict of ``evaluator.evaluate``)::

    {"doc_id": 0, "doc": {...}, "target": "2",
     "arguments": {"gen_args_0": {"arg_0": "<context>", "arg_1": " <choice 0>"}, ...},   # one per option
     "resps": [[["-4.25", "False"]], ...], "filtered_resps": [["-4.25", "False"], ...],
     "filter": "none", "metrics": ["acc", "acc_norm"], "acc": 1.0, "acc_norm": 0.0, ...}

``arg_0`` is the context (the same for every option), ``arg_1`` the continuation lm-eval scored (the
choice after its ``target_delimiter``, a space by default), ``filtered_resps[j][0]`` its loglikelihood
(a string: lm-eval writes every response with ``str``), and ``target`` the gold option, written with
``str``: its index, or the choice's text. Each option becomes a trace of two pieces, the context and
the continuation, with the loglikelihood on the continuation: lm-eval keeps no token of it
(``runner.choose(prompt, options)`` scores the same split token by token), so ``length="per_token"``
is not available on these choices; ``"sum"``, ``"per_char"`` (acc_norm) and ``"per_byte"`` (acc_bytes)
are.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np

from ...records.choices import Choices
from ...records.trace import Trace

__all__ = ["read_lm_eval"]


def read_lm_eval(path, *, length: str = "sum") -> Choices:
    """The documents of an lm-eval samples file (``samples_<task>_<date>.jsonl``) as `lv.Choices`.

    A row per document, in the file's order; each document its own options (its choices, as lm-eval
    scored them: with the delimiter before each), gold from ``target``, and ``meta`` with the task's
    name (from the file name), each row's ``doc_id`` and ``doc`` in ``meta["docs"]``.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("samples_*.jsonl"))
        if len(found) != 1:
            raise ValueError(f"{path} holds {len(found)} lm-eval samples files (samples_*.jsonl); give one of them: "
                             + ", ".join(str(f) for f in found[:5]))
        path = found[0]
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty: lm_eval --log_samples writes a JSON line per document")
    rows = [_document(path, n, line) for n, line in enumerate(lines, start=1)]
    task = re.sub(r"_\d{4}-\d\d-\d\dT[\d.-]+$", "", path.stem.removeprefix("samples_"))  # (lm-eval's date_id)
    prompts = [r["prompt"] for r in rows]
    options = [r["options"] for r in rows]
    traces = [[_trace(r["prompt"], o, ll, r["doc_id"], task) for o, ll in zip(r["options"], r["lls"], strict=True)]
              for r in rows]
    meta = {"source": "lm-eval", "task": task, "path": str(path), "tokens": False,
            "docs": [{"doc_id": r["doc_id"], "doc": r["doc"]} for r in rows]}
    try:
        return Choices(prompts, options, traces, [r["lls"] for r in rows], length=length,
                       gold=[r["gold"] for r in rows], meta=meta)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def _document(path: Path, n: int, line: str) -> dict:
    """One line's context, options, loglikelihoods and gold index; a ValueError naming the line otherwise."""
    where = f"{path}, line {n}"
    try:
        sample = json.loads(line)
        arguments = [sample["arguments"][f"gen_args_{j}"] for j in range(len(sample["arguments"]))]
        responses = sample["filtered_resps"]
        target = sample["target"]
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{where}: not an lm-eval sample ({type(error).__name__}: {error}); lm_eval --log_samples "
                         "writes samples_<task>_<date>.jsonl beside its results") from None
    if not arguments or any(not isinstance(a.get("arg_1"), str) for a in arguments):
        raise ValueError(f"{where}: not a multiple-choice sample: its arguments are not (context, continuation) "
                         "pairs (a generate_until task's samples hold generated text, not per-option loglikelihoods)")
    contexts = {a["arg_0"] for a in arguments}
    if len(contexts) != 1:
        raise ValueError(f"{where}: the options have different contexts (a task with multiple inputs); "
                         "read_lm_eval reads tasks whose options follow one context")
    options = [a["arg_1"] for a in arguments]
    lls = [_loglikelihood(where, r) for r in responses]
    if len(lls) != len(options):
        raise ValueError(f"{where}: {len(options)} options but {len(lls)} responses (acc_mutual_info's "
                         "unconditional requests are not read)")
    return {"prompt": contexts.pop(), "options": options, "lls": lls, "gold": _gold(where, target, options),
            "doc_id": sample.get("doc_id", n - 1), "doc": sample.get("doc")}


def _loglikelihood(where: str, response) -> float:
    value = response[0] if isinstance(response, (list, tuple)) else response
    try:
        ll = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: a response is {response!r}, not (loglikelihood, is_greedy)") from None
    if math.isnan(ll) or ll > 0:
        raise ValueError(f"{where}: a loglikelihood is {ll}, not a log-probability (<= 0)")
    return ll


def _gold(where: str, target: str, options: list[str]) -> int:
    """The gold option's index from lm-eval's ``str(target)``: an index, or a choice's text."""
    text = str(target)
    if text.lstrip("-").isdigit() and 0 <= int(text) < len(options):
        return int(text)
    for j, option in enumerate(options):
        if text in (option, option.lstrip()):
            return j
    raise ValueError(f"{where}: the target {text!r} is neither an option's index (0 to {len(options) - 1}) nor "
                     "one of its choices (a task with several right answers is not read)")


def _trace(prompt: str, option: str, ll: float, doc_id, task: str) -> Trace:
    """The context and the option as two pieces; the option's piece holds its whole loglikelihood."""
    return Trace(tokens=[prompt, option], logprobs=np.array([np.nan, ll], np.float32), prompt_len=1,
                 meta={"source": "lm-eval", "task": task, "doc_id": doc_id, "mode": "choose", "option": option,
                       "prompt": prompt, "tokens": "not recorded by lm-eval: the option is one piece with its "
                                                   "loglikelihood; runner.choose(prompt, options) scores its tokens"})
