"""A function-level import in the package says why, in a few words, or goes to the top of its module.

Lazy imports keep `import logprob_viz` light (no torch, no widgets until used) and break the few
cycles a layer would otherwise have; a reader must see which reason holds. The heavy or optional
packages the issue names (torch, transformers, plotly, pyarrow, ray) are their own reason.
A reason is a comment on the import's line or on the line above it.
"""

import ast

from tests.paths import REPO

SELF_EXPLAINED = {"torch", "transformers", "plotly", "pyarrow", "ray"}


def imported(node) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    return [node.module or "."]


def unexplained(path, root=REPO) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for function in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if all(name.split(".")[0] in SELF_EXPLAINED for name in imported(node)):
                continue
            if "#" not in lines[node.lineno - 1] and "#" not in lines[node.lineno - 2]:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_the_checker_finds_a_silent_lazy_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    import json\n\ndef g():\n    import torch\n\n"
                      "def h():\n    # a cycle: views import this module\n    from . import views\n")
    assert [line.split(": ", 1)[1] for line in unexplained(module, root=tmp_path)] == ["import json"]


def test_every_lazy_import_says_why():
    silent = [line for path in sorted((REPO / "logprob_viz").rglob("*.py")) for line in unexplained(path)]
    assert not silent, "function-level imports without a reason (a comment) or a move to the top:\n" + "\n".join(silent)
