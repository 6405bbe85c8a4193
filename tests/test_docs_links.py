"""README.md and docs/: every relative link names a file that exists, and every #anchor a
heading of that file (GitHub's slugs), so a section moved between pages is still found."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Every page in docs/ and every folder's README is covered as soon as it exists (issue 22).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")),
         *sorted(p for p in ROOT.glob("*/README.md") if not p.parent.name.startswith("."))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE = re.compile(r"^ *```.*?^ *```", re.DOTALL | re.MULTILINE)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors GitHub gives the page's headings; a repeated heading gets -1, -2, ..."""
    text = _CODE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for match in re.finditer(r"(?m)^#{1,6} +(.*?)[ #]*$", text):
        base = slug(match.group(1))
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def links(path: Path) -> list[str]:
    """The relative link targets of a page, outside code blocks."""
    text = _CODE.sub("", path.read_text(encoding="utf-8"))
    return [t for t in _LINK.findall(text) if not re.match(r"^[a-z]+:", t)]


def broken_links(page: Path) -> list[str]:
    """The page's relative links whose file is missing or whose anchor is no heading there."""
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        missing_anchor = dest.exists() and dest.suffix == ".md" and anchor not in {"", *anchors(dest)}
        if not dest.exists() or missing_anchor:
            broken.append(target)
    return broken


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("# A b\n\n[x](#a-b) [y](other.md#c) [z](missing.md)\n", ["missing.md"]),
        ("# A b\n\n[x](#a-c)\n", ["#a-c"]),
        ("# A\n\n[x](other.md#nope)\n", ["other.md#nope"]),
        ("# Same\n## Same\n\n[x](#same-1) [y](#same-2)\n", ["#same-2"]),
        ("# Run: `sync`, (all)\n\n[x](#run-sync-all)\n", []),
        ("# A\n\n```\n[x](missing.md)\n## B\n```\n[y](#b)\n", ["#b"]),
        ("# A\n\n[web](https://example.com/x#y) [mail](mailto:a@b)\n", []),
    ],
)
def test_the_checker_finds_broken_links(tmp_path: Path, text: str, broken: list[str]) -> None:
    """A missing file or heading is reported; code blocks, URLs and GitHub's slugs are not."""
    (tmp_path / "other.md").write_text("# C\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    assert broken_links(page) == broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    """Each link's file exists and its anchor is a heading there."""
    assert broken_links(page) == []


def test_the_readme_stays_a_first_page() -> None:
    """The README is what a person reads first; the reference lives in docs/ (issue 22)."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 400


def test_every_docs_page_is_in_the_readme_contents() -> None:
    """Each page of docs/ is linked from the README's Contents, so every section can be found."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    contents = readme.split("\n## Contents\n", 1)[1].split("\n## ", 1)[0]
    linked = {t.partition("#")[0] for t in _LINK.findall(contents)}
    pages = {str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("**/*.md")}
    assert pages - linked == set()
