"""Size limits the test command enforces: no module over 400 lines, no function over 60 (issue 29).

    python scripts/check_sizes.py [PATH ...] [--max-module-lines 400] [--max-function-lines 60]

PATHs are folders or .py files (default: logprob_viz/ and benchmarks/, relative to the
repository root); generated folders (`static/`) and caches are skipped. A module's length is
its number of lines; a function's (def, async def, methods, nested functions) runs from its
`def` line to its last line, as `ast` reports them, so a nested function counts in its outer
function too. Each offender is printed as `file:line: what, N lines (max M)`, longest first;
the exit status is 1 when there is one, 0 when there is none. JS is checked by eslint rules.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ["logprob_viz", "benchmarks"]
SKIPPED_FOLDERS = {"static", "__pycache__", "node_modules", ".venv"}  # generated or not ours


@dataclass(frozen=True)
class Offender:
    path: Path
    line: int
    what: str  # "module" or "function Class.name"
    lines: int
    limit: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}, {self.lines} lines (max {self.limit})"


def python_files(paths: list[Path]) -> list[Path]:
    """Every .py file under `paths`, outside generated folders, in a stable order."""
    files: list[Path] = []
    for path in paths:
        if not path.exists():
            raise FileNotFoundError(f"check_sizes: {path} does not exist; pass folders or .py files that do")
        if path.is_file():
            files.append(path)
            continue
        for file in sorted(path.rglob("*.py")):
            if not SKIPPED_FOLDERS.intersection(file.relative_to(path).parts[:-1]):
                files.append(file)
    return files


def functions(tree: ast.AST) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """(qualified name, node) of every function in the tree, methods and nested ones included."""
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append((prefix + child.name, child))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def offenders_in(file: Path, shown_as: Path, max_module: int, max_function: int) -> list[Offender]:
    text = file.read_text(encoding="utf-8")
    found = []
    module_lines = len(text.splitlines())
    if module_lines > max_module:
        found.append(Offender(shown_as, 1, "module", module_lines, max_module))
    for name, node in functions(ast.parse(text, filename=str(file))):
        length = node.end_lineno - node.lineno + 1
        if length > max_function:
            found.append(Offender(shown_as, node.lineno, f"function {name}", length, max_function))
    return found


def check(paths: list[Path], max_module: int = 400, max_function: int = 60) -> list[Offender]:
    """The offenders under `paths`, longest first (relative to the repository root when inside it)."""
    found = []
    for file in python_files(paths):
        resolved = file.resolve()
        shown_as = resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else file
        found += offenders_in(file, shown_as, max_module, max_function)
    return sorted(found, key=lambda o: (-o.lines, str(o.path), o.line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="folders or .py files (default: logprob_viz benchmarks)")
    parser.add_argument("--max-module-lines", type=int, default=400)
    parser.add_argument("--max-function-lines", type=int, default=60)
    args = parser.parse_args(argv)
    paths = args.paths or [ROOT / p for p in DEFAULT_PATHS]
    try:
        found = check(paths, args.max_module_lines, args.max_function_lines)
    except (FileNotFoundError, SyntaxError) as e:
        print(e, file=sys.stderr)
        return 2
    for offender in found:
        print(offender)
    if found:
        print(
            f"check_sizes: {len(found)} over the limits (modules <= {args.max_module_lines} lines, functions <= "
            f"{args.max_function_lines}): split them into smaller pieces",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
