"""poot/env.py: a hot-path read of an environment variable sees every change made
through os.environ, and parses a value once."""
from __future__ import annotations

import os

from poot import env


def test_reader_follows_setenv_delenv_and_direct_assignment(monkeypatch):
    monkeypatch.delenv("POOT_TEST_ENV_READER", raising=False)
    read = env.reader("POOT_TEST_ENV_READER", lambda v: "unset" if v is None else v.upper())
    assert read() == "unset"
    monkeypatch.setenv("POOT_TEST_ENV_READER", "abc")
    assert read() == "ABC"
    os.environ["POOT_TEST_ENV_READER"] = "xyz"
    assert read() == "XYZ"
    monkeypatch.delenv("POOT_TEST_ENV_READER")
    assert read() == "unset"


def test_reader_parses_each_value_once(monkeypatch):
    calls = []

    def parse(v):
        calls.append(v)
        return v

    monkeypatch.setenv("POOT_TEST_ENV_READER", "1")
    read = env.reader("POOT_TEST_ENV_READER", parse)
    assert [read() for _ in range(5)] == ["1"] * 5
    assert calls == ["1"]
    monkeypatch.setenv("POOT_TEST_ENV_READER", "2")
    assert read() == "2" and calls == ["1", "2"]


def test_default_device_follows_poot_device(monkeypatch):
    from poot.trace import context

    monkeypatch.setenv("POOT_DEVICE", "oracle")
    assert context.current() == "oracle"
    monkeypatch.delenv("POOT_DEVICE")
    assert context.current() == "cpu"
