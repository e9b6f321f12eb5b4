"""The package's import graph, folder by folder: which rooms import which, and how often.

    python scripts/import_graph.py            # text: one line per arrow, "from -> to (n imports)"
    python scripts/import_graph.py --dot      # Graphviz DOT (| dot -Tsvg > imports.svg)
    python scripts/import_graph.py --modules  # module by module instead of folder by folder

Read statically (ast), so it needs no installed package; imports inside functions count too.
"""

from __future__ import annotations

import argparse
import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "logprob_viz"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: pathlib.Path, name: str) -> list[str]:
    """The package modules that `name` (read from `path`) imports, resolved to absolute names."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")[: len(name.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            found += [base] + [f"{base}.{a.name}" for a in node.names]
    return [m for m in found if m.split(".")[0] == "logprob_viz"]


def room(module: str, modules: set[str], by_module: bool) -> str:
    """The folder (package) a module lives in, or the module itself with --modules."""
    while module not in modules and "." in module:
        module = module.rsplit(".", 1)[0]  # `from pkg import name` where name is not a module
    if by_module:
        return module
    path = PACKAGE.parent / module.replace(".", "/")
    return module if path.is_dir() else module.rsplit(".", 1)[0]


def arrows(by_module: bool) -> collections.Counter:
    paths = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    counts = collections.Counter()
    for name, path in paths.items():
        source = room(name, set(paths), by_module)
        for target in {room(m, set(paths), by_module) for m in imported_modules(path, name)}:
            if target != source:
                counts[source, target] += 1
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dot", action="store_true", help="print Graphviz DOT")
    parser.add_argument("--modules", action="store_true", help="module by module")
    args = parser.parse_args()
    counts = arrows(args.modules)
    short = lambda m: m.removeprefix("logprob_viz.") or m  # noqa: E731
    if args.dot:
        print("digraph imports {\n  rankdir=LR; node [shape=box];")
        for (a, b), n in sorted(counts.items()):
            print(f'  "{short(a)}" -> "{short(b)}" [label={n}];')
        print("}")
        return
    for (a, b), n in sorted(counts.items()):
        print(f"{short(a)} -> {short(b)} ({n} module{'s' if n > 1 else ''})")


if __name__ == "__main__":
    main()
