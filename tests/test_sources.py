"""Provenance stays in the repository: every anchor of ``docs/sources.md`` that a file cites
exists, and no file cites a note outside the repository."""

from __future__ import annotations

import re

from conftest import REPO

SOURCES = REPO / "docs" / "sources.md"
CITED = re.compile(r"sources\.md#([a-z0-9-]+)")
ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"')
TEXT = ("*.py", "*.md", "*.yaml", "*.sh", "*.cpp")
SKIP = {".venv", ".git", "build", "node_modules"}


def _files():
    for pattern in TEXT:
        for path in REPO.rglob(pattern):
            if not SKIP & set(path.relative_to(REPO).parts):
                yield path


def test_every_cited_source_exists():
    anchors = set(ANCHOR.findall(SOURCES.read_text(encoding="utf-8")))
    missing = sorted({(str(p.relative_to(REPO)), a) for p in _files()
                      for a in CITED.findall(p.read_text(encoding="utf-8", errors="replace"))
                      if a not in anchors})
    assert not missing, f"citations of anchors docs/sources.md lacks: {missing[:20]}"


def test_no_citation_of_a_note_outside_the_repository():
    outside = "facts " + "§"
    citing = sorted(str(p.relative_to(REPO)) for p in _files()
                    if outside in p.read_text(encoding="utf-8", errors="replace"))
    assert not citing, f"cite docs/sources.md instead: {citing}"
