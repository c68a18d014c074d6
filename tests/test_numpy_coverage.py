"""docs/numpy-coverage.md is what `python -m poot.coverage` generates now (so it stays current), and
the generator's probe tells lazy functions, host steps and eager reads apart."""
from __future__ import annotations

import difflib
import re

import numpy as np
import pytest

import poot as pt
from poot import coverage

REGENERATE = "regenerate it with: python -m poot.coverage"
ROW = re.compile(r"^\| `([^`]+)` \| (.+) \|$")


def rows(text: str) -> dict[tuple[str, str], str]:
    """{(namespace, function): status} from the per-namespace tables of the page."""
    out, section = {}, None
    for line in text.splitlines():
        if line.startswith("## `"):
            section = line[4:-1]
        elif section is not None and (m := ROW.match(line)):
            out[(section, m.group(1))] = m.group(2)
    return out


def numpy_version(text: str) -> str:
    m = re.search(r"against NumPy (\d+\.\d+)", text)
    assert m, f"docs/numpy-coverage.md has no 'against NumPy X.Y' line; {REGENERATE}"
    return m.group(1)


@pytest.fixture(scope="module")
def generated() -> str:
    return coverage.render(coverage.sections())


def test_committed_table_is_current(generated):
    assert coverage.DOC.is_file(), f"docs/numpy-coverage.md is missing; {REGENERATE}"
    committed = coverage.DOC.read_text(encoding="utf-8")
    if numpy_version(committed) == numpy_version(generated):
        if committed != generated:
            diff = "\n".join(difflib.unified_diff(committed.splitlines(), generated.splitlines(),
                                                  "docs/numpy-coverage.md", "generated", lineterm="", n=0))
            pytest.fail(f"docs/numpy-coverage.md is out of date; {REGENERATE}\n{diff[:4000]}")
    else:   # another NumPy lists other functions: compare the functions both versions have
        old, new = rows(committed), rows(generated)
        changed = {k: (old[k], new[k]) for k in old.keys() & new.keys() if old[k] != new[k]}
        assert not changed, f"docs/numpy-coverage.md is out of date ({REGENERATE}): {changed}"


def test_table_has_every_namespace_and_known_answers(generated):
    table = rows(generated)
    assert {s for s, _ in table} == {"numpy", "numpy.linalg", "numpy.fft", "numpy.polynomial.polynomial",
                                     "numpy.random.Generator"}
    assert len([k for k in table if k[0] == "numpy"]) > 300
    assert table[("numpy", "exp")] == "lazy"
    assert table[("numpy", "sort")] == "host step: sort"
    assert table[("numpy", "median")] == "host step: sort"
    assert table[("numpy.linalg", "eigh")] == "host step: eigh"
    assert table[("numpy", "unique")] == "realizes"
    assert table[("numpy.random.Generator", "normal")] == "lazy"
    assert table[("numpy.polynomial.polynomial", "polyval")] == "lazy"
    assert table[("numpy.polynomial.polynomial", "polyadd")] == "realizes"
    assert table[("numpy", "save")] in ("present (not probed)", "missing")
    assert all(s.split(":")[0] in coverage.STATUSES for s in table.values())


def test_probe_tells_the_ways_a_function_runs_apart():
    candidates = [coverage.call(coverage.V)]

    def reads_values(x):
        return pt.asarray(np.sort(x.numpy()))

    assert coverage.classify("f", np.sort, lambda x: pt.exp(x) + 1, candidates) == "lazy"
    assert coverage.classify("f", np.sort, pt.sort, candidates) == "host step: sort"
    assert coverage.classify("f", np.sort, reads_values, candidates) == "realizes"
    assert coverage.classify("f", np.sort, None, candidates) == "missing"

    def unbuilt(x):
        raise pt.NotBuiltError("f: not built")

    assert coverage.classify("f", np.sort, unbuilt, candidates) == "not built"
    # NumPy accepts the sample but poot refuses every form: reported, not guessed
    assert coverage.classify("f", np.sort, lambda x: pt.reshape(x, (7,)), candidates) == "present (not probed)"
    # no sample that NumPy accepts
    assert coverage.classify("f", np.linalg.inv, pt.exp, candidates) == "present (not probed)"


def test_probe_sees_host_ops_inside_loop_bodies():
    def loop(x):
        return pt.fori_loop(0, 2, lambda i, v: pt.sort(v), x)

    assert coverage.classify("f", np.sort, loop, [coverage.call(coverage.V)]) == "host step: sort"
