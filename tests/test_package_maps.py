"""Each package's docstring is its map: it names every module and subpackage in it.

A newcomer opens a folder's ``__init__.py`` to learn what is where; a module added without a line
there is a room missing from the map. A name counts as named when it appears as a whole word.
"""

import ast
import re

from tests.paths import REPO

PACKAGE = REPO / "logprob_viz"


def _members(folder):
    modules = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
    packages = [p.name for p in folder.iterdir() if (p / "__init__.py").exists()]
    return sorted(modules + packages)


def test_every_package_docstring_names_every_module_in_it():
    missing = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        for name in _members(init.parent):
            if not re.search(rf"(?<![\w.]){re.escape(name)}\b", doc):
                missing.append(f"{init.parent.relative_to(REPO)}: {name}")
    assert not missing, f"package docstrings miss: {missing}"


def test_a_module_name_means_one_thing_across_folders():
    """The names that meant different things in different folders (issue 46) are each left in one place at most."""
    renamed = ("branching", "jobs", "settings")
    places = {name: sorted(str(p.relative_to(REPO)) for p in PACKAGE.rglob(f"{name}.py")) for name in renamed}
    repeated = {name: where for name, where in places.items() if len(where) > 1}
    assert not repeated, f"one name, different things: rename to what each holds: {repeated}"
