"""scripts/check_sizes.py, the size limits the test command enforces, on files of known sizes."""

from __future__ import annotations

import subprocess
import sys

from paths import REPO

SCRIPT = REPO / "scripts" / "check_sizes.py"


def function_of(lines: int, name: str, indent: str = "", keyword: str = "def") -> str:
    """A function whose def line to last line is exactly `lines` lines."""
    body = [f"{indent}    x{i} = {i}" for i in range(lines - 1)]
    return "\n".join([f"{indent}{keyword} {name}():", *body]) + "\n"


def run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_reports_each_function_over_the_limit_with_its_line_and_length(tmp_path):
    source = (
        function_of(80, "at_the_limit")  # lines 1-80: allowed
        + function_of(81, "one_over")  # lines 81-161
        + "class Holder:\n"  # line 162
        + function_of(90, "method", indent="    ")  # lines 163-252
        + function_of(5, "outer")  # lines 253-257, then a nested one inside it
    )
    source += function_of(82, "inner", indent="    ", keyword="async def")  # lines 258-339: outer is 87 lines
    (tmp_path / "mod.py").write_text(source)
    got = run(tmp_path, "--max-function-lines", 80)
    assert got.returncode == 1, got.stderr
    lines = got.stdout.splitlines()
    path = tmp_path / "mod.py"
    assert lines == [
        f"{path}:163: function Holder.method, 90 lines (max 80)",
        f"{path}:253: function outer, 87 lines (max 80)",
        f"{path}:258: function outer.inner, 82 lines (max 80)",
        f"{path}:81: function one_over, 81 lines (max 80)",
    ]
    assert "4 over the limits" in got.stderr


def test_reports_a_module_over_400_lines_and_skips_generated_static(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("".join(f"x{i} = {i}\n" for i in range(401)))
    (tmp_path / "pkg" / "fine.py").write_text("".join(f"x{i} = {i}\n" for i in range(400)))
    (tmp_path / "pkg" / "static").mkdir()
    (tmp_path / "pkg" / "static" / "bundle.py").write_text(function_of(500, "generated"))
    got = run(tmp_path)
    assert got.returncode == 1
    assert got.stdout.splitlines() == [f"{tmp_path / 'pkg' / 'long.py'}:1: module, 401 lines (max 400)"]


def test_passes_when_nothing_is_over_and_limits_are_settable(tmp_path):
    (tmp_path / "ok.py").write_text(function_of(30, "short"))
    assert run(tmp_path).returncode == 0
    tight = run(tmp_path, "--max-function-lines", "29")
    assert tight.returncode == 1
    assert tight.stdout.strip() == f"{tmp_path / 'ok.py'}:1: function short, 30 lines (max 29)"


def test_a_missing_path_is_an_error_that_names_it(tmp_path):
    got = run(tmp_path / "nowhere")
    assert got.returncode == 2
    assert "nowhere does not exist" in got.stderr


def test_the_default_function_limit_is_60(tmp_path):
    (tmp_path / "mod.py").write_text(function_of(60, "at_the_limit") + function_of(61, "one_over"))
    got = run(tmp_path)
    assert got.returncode == 1, got.stderr
    assert got.stdout.splitlines() == [f"{tmp_path / 'mod.py'}:61: function one_over, 61 lines (max 60)"]
