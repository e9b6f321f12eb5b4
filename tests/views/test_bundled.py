"""Each bundle declared once: js/build.mjs's entries, pyproject.toml's ensured targets and the widget
classes' bundles are the one set `views.bundled.BUNDLES` lists (read as text where they are text)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re

import pytest

import logprob_viz.views
import paths
from logprob_viz.views.bundled import BUNDLES, Bundled

STATIC_PREFIX = "logprob_viz/views/static/"


def build_entries() -> dict[str, str]:
    """{bundle name: format} from the ENTRIES table of js/build.mjs (rows ``entry | name | format``)."""
    text = (paths.REPO / "js" / "build.mjs").read_text(encoding="utf-8")
    table = re.search(r"ENTRIES = rows\(`(.*?)`\)", text, re.DOTALL).group(1)
    rows = [[field.strip() for field in line.split("|")] for line in table.splitlines() if line.strip()]
    return {name: fmt for _entry, name, fmt in rows}


def widget_classes() -> list[type]:
    """Every `Bundled` subclass in the views package, every module imported first."""
    for module in pkgutil.walk_packages(logprob_viz.views.__path__, "logprob_viz.views."):
        importlib.import_module(module.name)
    found, todo = [], [Bundled]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_the_build_writes_every_bundle_the_table_lists():
    entries = build_entries()
    assert set(entries) == set(BUNDLES)
    # an ES module is a widget's (script and stylesheet); an IIFE an offline page's script alone
    assert {name for name, fmt in entries.items() if fmt == "esm"} == {n for n, f in BUNDLES.items() if len(f) == 2}


@pytest.mark.parametrize("key", ["ensured-targets", "skip-if-exists"])
def test_the_wheel_ensures_every_file_of_every_bundle(key):
    pyproject = (paths.REPO / "pyproject.toml").read_text(encoding="utf-8")
    # (one line each, a list of double-quoted strings: JSON as well as TOML; tomllib is Python 3.11+)
    listed = json.loads(re.search(rf"^{key} = (\[.*\])$", pyproject, re.MULTILINE).group(1))
    assert sorted(listed) == sorted(STATIC_PREFIX + name for files in BUNDLES.values() for name in files)


def test_each_widget_bundle_has_one_class_that_names_it():
    named = [cls.bundle for cls in widget_classes() if "bundle" in vars(cls)]  # (a subclass inherits it)
    assert sorted(named) == sorted(n for n, files in BUNDLES.items() if len(files) == 2)


def test_a_class_naming_no_widget_bundle_is_refused():
    with pytest.raises(ValueError, match="bundle must be a widget's bundle"):
        type("Stray", (Bundled,), {}, bundle="standalone")
