"""Where the suite's data lives, named once for every test folder."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = TESTS / "artifacts"
