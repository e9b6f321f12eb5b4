"""What a `pip install` user gets: a wheel that carries the JS bundle and needs neither node nor torch."""

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, f"the wheel did not build:\n{built.stdout[-2000:]}\n{built.stderr[-2000:]}"
    (wheel_file,) = out.glob("logprob_viz-*.whl")
    return wheel_file


def test_wheel_contains_the_bundle(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "logprob_viz/views/static/widget.js" in names
    assert "logprob_viz/views/static/standalone.js" in names  # for to_html and the notebook's HTML fallback
    assert not [n for n in names if "node_modules" in n or n.startswith("js/")]


def test_wheel_installs_and_imports_without_torch(wheel, tmp_path):
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, capture_output=True)
    code = (
        "import sys, importlib.util as u\n"
        "assert u.find_spec('torch') is None, 'this environment should not have torch'\n"
        "import logprob_viz as lv\n"
        "view = lv.LogprobView(lv.Trace(tokens=['a', 'b'], logprobs=[float('nan'), -0.5]))\n"
        "assert len(view._esm) > 1000, 'the bundle is read from the installed package'\n"
        "print('ok')\n"
    )
    result = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
