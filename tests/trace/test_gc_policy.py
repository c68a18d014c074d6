"""poot raises Python's youngest-generation GC threshold at import (poot/trace/gc_policy.py), only
upwards, and POOT_GC_THRESHOLD=0 leaves Python's settings alone. Each case is a fresh interpreter:
the threshold is process state set once, at import."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from poot.trace.gc_policy import DEFAULT_THRESHOLD


def _threshold_after_import(before: str = "", **env) -> tuple:
    code = f"import gc; {before}; import poot; print(tuple(gc.get_threshold()))"
    environ = {k: v for k, v in os.environ.items() if k != "POOT_GC_THRESHOLD"} | env
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=120)
    assert out.returncode == 0, out.stderr
    return eval(out.stdout.strip().splitlines()[-1])


def test_import_raises_the_young_threshold_and_keeps_the_older_ones():
    import gc

    default_older = (10, 10)
    young, *older = _threshold_after_import("gc.set_threshold(700, 10, 10)")
    assert young == DEFAULT_THRESHOLD and tuple(older) == default_older
    assert gc.get_threshold()[0] >= DEFAULT_THRESHOLD     # this process imported poot too


@pytest.mark.parametrize("before, env, expected", [
    ("gc.set_threshold(700, 10, 10)", {"POOT_GC_THRESHOLD": "0"}, (700, 10, 10)),      # off: Python's own
    ("gc.set_threshold(50000, 5, 5)", {}, (50000, 5, 5)),                            # higher: kept
    ("gc.set_threshold(0)", {}, (0, 10, 10)),                                         # collection off: kept
    ("gc.set_threshold(700, 10, 10)", {"POOT_GC_THRESHOLD": "3000"}, (3000, 10, 10)),  # the variable's value
])
def test_the_threshold_is_only_raised_and_the_variable_sets_it(before, env, expected):
    assert _threshold_after_import(before, **env) == expected


def test_a_bad_value_names_the_variable():
    environ = dict(os.environ, POOT_GC_THRESHOLD="lots")
    out = subprocess.run([sys.executable, "-c", "import poot"], capture_output=True, text=True, env=environ,
                         timeout=120)
    assert out.returncode != 0 and "POOT_GC_THRESHOLD='lots'" in out.stderr and "ConfigError" in out.stderr
