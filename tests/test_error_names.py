"""Every error class the docs name is reachable as `pt.<Name>`, and messages name what exists (the
oracle among the devices, real source paths)."""
from __future__ import annotations

import pathlib
import re

import pytest

import poot as pt
import poot.errors

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_every_error_class_is_exported():
    classes = [n for n, v in vars(poot.errors).items()
               if isinstance(v, type) and issubclass(v, (Exception, Warning)) and v.__module__ == "poot.errors"]
    assert "KernelIndexError" in classes
    assert [n for n in classes if getattr(pt, n, None) is not getattr(poot.errors, n)] == []


def test_every_error_the_docs_call_pt_or_poot_something_is_exported():
    """`pt.X` / `poot.X` in a page must work as written (errors of a sub-package, such as poot.models',
    are named with theirs)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    names = set()
    for page in pages:
        names |= set(re.findall(r"\b(?:pt|poot)\.([A-Z]\w*(?:Error|Trap|Warning))\b", page.read_text()))
    assert {"KernelTrap", "PootError"} <= names
    assert sorted(n for n in names if not hasattr(pt, n)) == []
    assert issubclass(pt.KernelIndexError, pt.KernelTrap) and issubclass(pt.ArgumentWriteError, pt.TracerError)


def test_the_unknown_device_message_lists_the_oracle():
    with pytest.raises(pt.DeviceUnavailableError, match=r"poot knows cpu, cuda, wgpu, vulkan, rocm and the "
                                                         r"pseudo-device oracle"):
        pt.device("bogus")


def test_messages_name_paths_that_exist():
    for path in ("poot/jit/llvm/lower.py", "poot/jit/kir/model.py"):
        text = (ROOT / path).read_text()
        assert "kernelgen/" not in text
        for named in re.findall(r"poot/[\w/]+\.py", text):
            assert (ROOT / named).is_file(), (path, named)


@pytest.mark.parametrize("name", ["POOT_CPU_GEMV", "POOT_GPU_SORT", "POOT_GPU_FFT", "POOT_GPU_GEMM", "POOT_GPU_GEMV"])
def test_a_bad_choice_variable_is_a_config_error(monkeypatch, name):
    from poot.jit.codegen.common import env_choice
    from poot.jit.runtime.matvec import forced

    monkeypatch.setenv(name, "bogus")
    with pytest.raises(pt.ConfigError, match=f"{name} is 'bogus'") as e:
        forced() if name == "POOT_CPU_GEMV" else env_choice(name, ("auto", "x", "y"))
    assert isinstance(e.value, ValueError)
