"""The README's layout section names every folder a newcomer will open, so it cannot fall behind them."""

import re
import subprocess

from tests.paths import REPO


def _layout_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Layout", 1)[1]
    return section.split("\n## ", 1)[0]


def _folders(parent: str, skip: set[str]) -> list[str]:
    return sorted(p.name for p in (REPO / parent).iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")) and p.name not in skip)


def test_every_package_folder_and_top_level_module_is_in_the_layout():
    layout = _layout_section()
    package = _folders("logprob_viz", set())
    modules = sorted(p.name for p in (REPO / "logprob_viz").glob("*.py") if p.name != "__init__.py")
    missing = [f"{name}/" for name in package if f"  {name}/" not in layout]
    missing += [name for name in modules if not re.search(rf"\b{re.escape(name)}\b", layout)]
    assert not missing, f"README's Layout does not mention: {missing}"


def test_every_frontend_and_source_subfolder_is_in_the_layout():
    layout = _layout_section()
    named = {"js": _folders("js", {"node_modules"}),
             "logprob_viz/sources": _folders("logprob_viz/sources", set()),
             "logprob_viz/views": _folders("logprob_viz/views", {"static"}) + ["static"]}
    missing = [f"{parent}/{name}" for parent, names in named.items() for name in names
               if not re.search(rf"\b{re.escape(name)}/", layout)]
    assert not missing, f"README's Layout does not mention: {missing}"


def test_every_top_level_folder_in_git_is_in_the_layout():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    top = sorted({line.split("/", 1)[0] for line in tracked.splitlines() if "/" in line} - {".ci"})
    missing = [name for name in top if f"{name}/" not in _layout_section()]
    assert top and not missing, f"README's Layout does not mention: {missing}"
