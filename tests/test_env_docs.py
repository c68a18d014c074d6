"""docs/environment.md lists every POOT_* environment variable the package (and the test suite's
conftest) reads: a variable added to the code without a line in that page fails here."""
from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
# a POOT_ name that is not part of a longer identifier (`_POOT_DIR` is a Python constant, not a variable)
NAME = re.compile(r"(?<![A-Za-z0-9_])POOT_[A-Z0-9_]*[A-Z0-9]")


def names_in_sources() -> dict[str, str]:
    """Each POOT_* name found in poot/ and tests/conftest.py, with the first file that uses it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "poot").rglob("*.py")) + [ROOT / "tests" / "conftest.py"]:
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def documented(name: str, page: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", page) is not None


def test_the_scan_finds_the_variables_everyone_uses():
    found = names_in_sources()
    assert {"POOT_DEVICE", "POOT_DEBUG", "POOT_CACHE_DIR", "POOT_TEST_DEVICES"} <= found.keys()
    assert "POOT_DIR" not in found       # from `_POOT_DIR`, a constant of poot/trace/lazy.py


def test_every_variable_is_in_docs_environment_md():
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    undocumented = {n: where for n, where in names_in_sources().items() if not documented(n, page)}
    assert not undocumented, ("docs/environment.md does not list these variables (name: first file "
                              f"that reads it): {undocumented}; add a row for each")
