"""POOT_* variables are checked: an integer that is not a whole number (or is negative), an on/off switch
that is not 0 or 1, or a debug level that is not a number stops with ConfigError naming the variable and
its value, at `import poot` when it was set before (docs/environment.md)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import poot as pt
from poot import env


def run_import(**variables) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("POOT_")}
    environ.update(variables)
    code = "import poot as pt; print((pt.ones(3) + 1).numpy().tolist(), pt.asarray(1.0).device)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, timeout=300)


@pytest.mark.parametrize("name, value, says", [
    ("POOT_MAX_KERNEL_NODES", "abc", "not a whole number"),
    ("POOT_MAX_IR_BYTES", "-5", "below 1"),
    ("POOT_MAX_ARTIFACT_BYTES", "0", "below 1"),
    ("POOT_CPU_POOL_BYTES", "1e9", "not a whole number"),
    ("POOT_CPU_POOL_BYTES", "-1", "below 0"),
    ("POOT_DEBUG", "abc", "not a whole number"),
    ("POOT_DISK_CACHE", "off", "use 1 (on) or 0 (off)"),
    ("POOT_CPU_BLAS", "no", "use 1 (on) or 0 (off)"),
    ("POOT_CPU_CHAIN", "2", "use 1 (on) or 0 (off)"),
    ("POOT_EAGER_REPLAY", "true", "use 1 (on) or 0 (off)"),
    ("POOT_LOG_COMPILES", "yes", "use 1 (on) or 0 (off)"),
])
def test_a_bad_value_is_reported_at_import_naming_the_variable(name, value, says):
    done = run_import(**{name: value})
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("poot.errors.ConfigError: ") and f"{name}={value!r}" in last and says in last, last


def test_good_values_and_empty_ones_run():
    done = run_import(POOT_MAX_KERNEL_NODES="2_000_000", POOT_CPU_POOL_BYTES="0", POOT_DEBUG="", POOT_DEVICE="",
                      POOT_DISK_CACHE="0", POOT_CPU_BLAS="1", POOT_CPU_CHAIN="", POOT_EAGER_REPLAY=" 0 ")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[2.0,", "2.0,", "2.0]", "cpu"]


def test_parsers():
    assert env.parse_int("POOT_X", None, 7) == 7 and env.parse_int("POOT_X", " 12 ", 7) == 12
    assert env.parse_switch("POOT_X", "", True) is True and env.parse_switch("POOT_X", "0", True) is False
    with pytest.raises(pt.ConfigError, match="POOT_X='1.5' is not a whole number"):
        env.parse_int("POOT_X", "1.5", 7)
    with pytest.raises(ValueError, match="POOT_Y='on'"):     # a ConfigError is a ValueError
        env.parse_switch("POOT_Y", "on", False)


def test_a_bad_value_set_after_import_is_reported_where_it_is_read(monkeypatch):
    monkeypatch.setenv("POOT_DEBUG", "verbose")
    with pytest.raises(pt.ConfigError, match="POOT_DEBUG='verbose'"):
        (pt.ones(3) + 2).numpy()
    monkeypatch.setenv("POOT_DEBUG", "0")
    assert (pt.ones(3) + 2).numpy().tolist() == [3.0, 3.0, 3.0]


def test_an_empty_poot_device_is_the_default_device(monkeypatch):
    from poot.trace import context

    monkeypatch.setenv("POOT_DEVICE", "")
    assert context.default() == "cpu"
    monkeypatch.setenv("POOT_DEVICE", "oracle")
    assert context.default() == "oracle"
