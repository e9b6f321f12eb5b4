"""One whole-number rule (records/trace_fields.is_int) for what users pass: ints and NumPy ints, never a bool.
Server bodies keep JSON's stricter rule (``type(x) is int``, in sources/readers and sources/remote)."""

import ast

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.records.calibration import calibration
from logprob_viz.records.trace_fields import is_int
from paths import REPO

PACKAGE = REPO / "logprob_viz"
# type dispatches, not whole-number checks: a JSON path's list index, a gold label that may be an
# index or a text, a slider's number, the wire codec's plain values, a contrast given by id or text
DISPATCHES = {"records/json/spans.py", "records/choices.py", "records/lens.py", "views/explorer/controls.py",
              "views/codec.py", "views/logprob/attribution.py"}


def test_the_rule():
    assert all(is_int(x) for x in (0, 7, -3, np.int64(5), np.int32(2), np.uint8(1)))
    assert not any(is_int(x) for x in (True, False, np.bool_(True), 1.0, "1", None, np.float64(2.0)))


def test_a_bool_is_refused_where_a_count_or_position_is_asked(tmp_path):
    t = lv.Trace(tokens=["a", "b", "c"], token_ids=[1, 2, 3], logprobs=[np.nan, -1.0, -2.0], prompt_len=1)
    with pytest.raises(TypeError, match="pinned"):
        t.to_svg(pinned=True)
    with pytest.raises(ValueError, match="not a node of this tree"):
        lv.Tree(t).index(True)
    with pytest.raises(ValueError, match="prompt_len"):  # True passed as 1 before there was one rule
        lv.Trace(tokens=["a", "b"], token_ids=[1, 2], logprobs=[np.nan, -1.0], prompt_len=True)
    with pytest.raises(ValueError, match="max_new_tokens"):
        lv.Tree(t).sample(n=2, at=2, max_new_tokens=True)
    with pytest.raises(ValueError, match="parent"):
        lv.Tree.from_dict({**lv.Tree(t).to_dict(), "nodes": [t.to_dict()] * 2, "parents": [None, False]})
    with pytest.raises((TypeError, ValueError), match="bins"):
        calibration([0.9, 0.2], [True, False], bins=True)


def _int_checks(tree: ast.AST):
    """isinstance(x, int), isinstance(x, (int, ...)), isinstance(x, numbers.Integral), np.integer."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            names = {getattr(k, "id", None) or getattr(k, "attr", None) for k in kinds}
            if names & {"int", "Integral", "integer"}:
                yield node.lineno


def test_no_module_writes_its_own_whole_number_check():
    found = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "records/trace_fields.py" or rel.startswith("sources/readers/") or rel in DISPATCHES:
            continue
        found += [f"{rel}:{line}" for line in _int_checks(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, f"use records.trace_fields.is_int (one rule: no bools) instead of: {found}"
