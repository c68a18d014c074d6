"""The ```python blocks of the documentation run and raise nothing.

A page opts in with the line `<!-- doc-examples: run -->` (docs/getting-started.md does); its blocks
run in order in one namespace, as for a reader following the page, compiled under the page's name with
the page's line numbers, so a failure points at the line of the page. Blocks in other languages
(```bash) are shown, not run.
"""
from __future__ import annotations

import linecache
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = "<!-- doc-examples: run -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def marked_pages() -> list[pathlib.Path]:
    return sorted(p for p in (ROOT / "docs").glob("*.md") if MARKER in p.read_text(encoding="utf-8"))


def python_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the block's first code line, code) for each ```python block."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_getting_started_is_marked_and_has_examples():
    page = ROOT / "docs" / "getting-started.md"
    assert page in marked_pages()
    assert len(python_blocks(page.read_text(encoding="utf-8"))) >= 10


def test_block_extraction_keeps_line_numbers():
    text = "intro\n```python\nx = 1\n```\n\n```bash\nls\n```\n```python\ny = 2\nz = 3\n```\n"
    assert python_blocks(text) == [(3, "x = 1\n"), (10, "y = 2\nz = 3\n")]


@pytest.mark.parametrize("page", marked_pages(), ids=lambda p: p.name)
def test_page_examples_run(page):
    text = page.read_text(encoding="utf-8")
    name = f"docs/{page.name}"
    # the "source file" of the examples: the page with every line outside the python blocks blank, so
    # tracebacks and the @pt.kernel importer (which parses its function's file) read the page's lines
    lines = ["\n"] * (text.count("\n") + 1)
    for line, code in python_blocks(text):
        lines[line - 1:line - 1 + code.count("\n")] = code.splitlines(True)
    # kept after the test: pytest reads it to show the failing line of the page
    linecache.cache[name] = (len(text), None, lines, name)
    namespace = {"__name__": f"docs_{page.stem.replace('-', '_')}"}
    for line, code in python_blocks(text):
        exec(compile("\n" * (line - 1) + code, name, "exec"), namespace)   # noqa: S102


LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_links_stay_inside_the_repository():
    """README.md and docs/ link only to files of this repository (or to web pages): a newcomer's
    checkout has everything a link points at."""
    bad = []
    for page in [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md")):
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"https?://", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            if target.startswith(("/", "file:")) or ROOT not in path.parents or not path.exists():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert not bad, f"links to files outside the repository or missing: {bad}"
