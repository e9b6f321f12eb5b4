"""No import cycle in the package: a static read of every module's imports, lazy ones included.

Every ``import`` and ``from ... import`` of a ``logprob_viz`` module is an edge, wherever it is
written: at the top, inside a function (a lazy import) or under ``if TYPE_CHECKING``. A lazy
import that only breaks a cycle at run time still ties the two modules together, so it counts.
``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, else to
``pkg``; importing a module does not add edges to its parent packages (Python has them loaded
already when it gets there).

The package has none: the last ones went with records/viewable.py (a record finds its view in a
table views/shows.py fills, instead of importing it), records/fork.py and records/corpus/arrow.py.
"""

from __future__ import annotations

import ast

import paths

PACKAGE = paths.REPO / "logprob_viz"

def _modules() -> dict[str, tuple]:
    """module name -> (path, is a package)."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(paths.REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def _owner(name: str, modules) -> str | None:
    """The module that `name` (a module or an attribute of one) is defined in."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node, module: str, is_package: bool, modules) -> set[str]:
    if isinstance(node, ast.Import):
        return {_owner(a.name, modules) for a in node.names if a.name.split(".")[0] == "logprob_viz"}
    if node.level:  # relative: from the module's package, one level up per extra dot
        base = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module or ""
    if target.split(".")[0] != "logprob_viz":
        return set()
    return {f"{target}.{a.name}" if f"{target}.{a.name}" in modules else _owner(target, modules) for a in node.names}


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its text."""
    modules = _modules()
    graph = {}
    for module, (path, is_package) in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _imported(node, module, is_package, modules)
        graph[module] = {m for m in edges if m and m != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as [a, b, ..., a], or None (depth-first search, colouring the nodes)."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_lazy_cycle_and_none_in_a_tree(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    # a function-level import is an edge, as a top-level one is
    tree = ast.parse("def f():\n    from ..page import to_html\n")
    modules = {"logprob_viz.views.page": None, "logprob_viz.views.logprob.view": None}
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert _imported(node, "logprob_viz.views.logprob.view", False, modules) == {"logprob_viz.views.page"}


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 100 and "logprob_viz.views.page" in graph  # the whole package was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def cycle_within(graph, prefix):
    """A cycle among the modules under `prefix`, counting only their imports of each other."""
    layer = {m: {t for t in ts if t.startswith(prefix)} for m, ts in graph.items() if m.startswith(prefix)}
    return find_cycle(layer)


def test_the_views_import_no_cycle_among_themselves():
    # the views layer is clean with no exceptions: page.py is generic, each view owns its page
    graph = import_graph()
    cycle = cycle_within(graph, "logprob_viz.views")
    assert cycle is None, "import cycle in views/: " + " -> ".join(cycle)
    assert "logprob_viz.views.logprob.view" not in graph["logprob_viz.views.page"]


def test_the_sources_import_no_cycle_among_themselves():
    # the runner interface (base.py) owns the job lock's lookup, and the local runner no longer
    # re-exports its loading: sources/ is clean with no exceptions
    cycle = cycle_within(import_graph(), "logprob_viz.sources")
    assert cycle is None, "import cycle in sources/: " + " -> ".join(cycle)


def test_the_records_import_no_view():
    # records/ comes first: a record finds its views in the table views/shows.py fills in
    # (records/viewable.py), so not even a lazy import goes from a record to a view
    graph = import_graph()
    upward = sorted((m, t) for m, ts in graph.items() if m.startswith("logprob_viz.records")
                    for t in ts if t.startswith("logprob_viz.views"))
    assert not upward, f"records import views: {upward}"
