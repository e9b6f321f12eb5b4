"""No module uses another module's ``_`` names: a static read of every module of the package.

A name that starts with one underscore is private to the module that defines it. Two kinds of use
from elsewhere are counted:

- ``from x import _name`` where ``x`` is a module of the package (relative or ``logprob_viz...``);
- ``something._name`` where ``_name`` is defined (a def, a class, an assignment to a name or an
  attribute) only in other modules of the package, and ``something`` is not ``self`` or ``cls``.

IPython's display protocol (``_repr_html_``, ``_repr_mimebundle_``: one underscore at both ends)
is a public protocol, not a private name, and dunders are Python's. A helper used across modules
belongs to the interface it is used through: make it public there (`sources.runner.Runner` for
what the batch, corpus and explorer modules call on a runner).
"""

from __future__ import annotations

import ast
import collections

import paths

PACKAGE = paths.REPO / "logprob_viz"
LIMIT = 0  # none: what is used across modules is public where it is defined (issue 46)


def is_private(name: str) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return False  # Python's own (__init__, __all__, ...)
    if name.startswith("_") and name.endswith("_") and not name.startswith("__"):
        return False  # a protocol name: _repr_html_, _repr_mimebundle_, _ipython_display_
    return name.startswith("_")


def _assigned(target) -> list[str]:
    return [x.id if isinstance(x, ast.Name) else x.attr for x in ast.walk(target)
            if isinstance(x, (ast.Name, ast.Attribute)) and isinstance(x.ctx, ast.Store)]


def definitions(tree: ast.AST) -> set[str]:
    """The private names a module defines: functions, classes, assigned names and attributes."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names.update(_assigned(target))
    return {n for n in names if is_private(n)}


def _is_package_import(node: ast.ImportFrom) -> bool:
    return bool(node.level) or (node.module or "").split(".")[0] == "logprob_viz"


def private_uses(trees: dict[str, ast.AST]) -> list[tuple[str, int, str]]:
    """(module, line, what) for every use of another module's private name."""
    defined_in = collections.defaultdict(set)
    for module, tree in trees.items():
        for name in definitions(tree):
            defined_in[name].add(module)
    uses = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _is_package_import(node):
                uses += [(module, node.lineno, f"import {a.name}") for a in node.names if is_private(a.name)]
            elif isinstance(node, ast.Attribute) and is_private(node.attr):
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                owners = defined_in.get(node.attr, set())
                if owners and module not in owners:
                    uses.append((module, node.lineno, f".{node.attr}"))
    return sorted(uses)


def package_trees() -> dict[str, ast.AST]:
    return {str(path.relative_to(paths.REPO)): ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for path in sorted(PACKAGE.rglob("*.py"))}


def test_the_counter_sees_imports_and_attributes_but_not_protocol_names():
    trees = {
        "a.py": ast.parse("def _helper(): pass\nclass Thing:\n    def _private(self): pass\n"
                          "    def _repr_html_(self): pass\n"),
        "b.py": ast.parse("from .a import _helper, Thing\nfrom os import _exit\n"
                          "def f(thing, self):\n    thing._private()\n    self._private()\n"
                          "    thing._repr_html_()\n    thing._unknown\n"),
        "c.py": ast.parse("class Own:\n    def _private(self): pass\ndef g(x):\n    return x._private()\n"),
    }
    assert private_uses(trees) == [("b.py", 1, "import _helper"), ("b.py", 4, "._private")]


def test_no_module_uses_another_modules_private_names():
    uses = private_uses(package_trees())
    listed = "\n".join(f"  {module}:{line} {what}" for module, line, what in uses)
    print(f"{len(uses)} uses of another module's private names:\n{listed}")
    assert len(uses) <= LIMIT, (f"{len(uses)} uses of another module's private names (at most {LIMIT}): make "
                                f"what is used across modules public where it is defined\n{listed}")
