"""Every relative link and picture in the README and docs/ points at a file that exists.

The README keeps a screen of usage and links one page per concept in docs/; a page moved or renamed
must not leave a dead link behind.
"""

import re

from tests.paths import REPO

LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def _pages():
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_every_relative_link_resolves():
    dead = []
    for page in _pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                dead.append(f"{page.relative_to(REPO)} -> {target}")
    assert not dead, f"dead links: {dead}"


def test_the_readme_links_every_concept_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    missing = [name for name in pages if f"(docs/{name})" not in readme]
    assert pages and not missing, f"README links no page for: {missing}"
