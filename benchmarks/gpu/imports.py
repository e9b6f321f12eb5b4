"""Which packages the check's own code imports: a bare GPU machine has torch, transformers, numpy and
what they require, nothing else.

`watch` records, for every top-level module imported after it, the module that imported it first;
`beyond_bare` lists those that logprob_viz or the benchmarks imported and that neither the standard
library nor torch, transformers and numpy (with their requirements) provide. What transformers
imports of its own accord (accelerate, PIL when installed) is its affair, not ours.
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata as metadata
import re
import sys

OURS = ("logprob_viz", "benchmarks", "__main__")
BARE = ("torch", "transformers", "numpy")
first_importer: dict[str, str] = {}  # top-level module -> the module whose code imported it first


class _Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if "." not in name and name not in first_importer:
            first_importer[name] = _importer()
        return None  # the other finders find it


def _importer() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(("importlib", "_frozen_importlib")) and module != __name__:
            return module
        frame = frame.f_back
    return "?"


def watch() -> None:
    if not any(isinstance(finder, _Watch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Watch())


def bare_distributions() -> set[str]:
    """torch, transformers, numpy and every distribution they require (not their extras), normalised."""
    allowed, todo = set(), list(BARE)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in allowed:
            continue
        allowed.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [re.match(r"[A-Za-z0-9._-]+", r).group(0) for r in requires if "extra ==" not in r]
    return allowed


def beyond_bare() -> list[str]:
    """'module (by importer)' for each import of ours that a bare machine would lack."""
    allowed, owners = bare_distributions(), metadata.packages_distributions()
    found = []
    for module, importer in sorted(first_importer.items()):
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in owners.get(module, [])}
        if importer.startswith(OURS) and module in sys.modules and not module.startswith(OURS) \
                and module not in sys.stdlib_module_names and not dists & allowed:
            found.append(f"{module} (by {importer})")
    return found
