"""The `poot` command line answers a user's mistake (a file that does not parse, a path that cannot be
written, an unknown CPU name, a --root without kernels/) with one line and a non-zero exit status,
never a traceback or an LLVM abort."""
from __future__ import annotations

import textwrap

import pytest

from poot.cli import main

KERNEL_FILE = textwrap.dedent("""
    import poot as pt


    @pt.kernel
    def add(a: pt.In[pt.f32], b: pt.In[pt.f32], c: pt.Out[pt.f32]):
        i = pt.thread_index()
        if i < len(c):
            c[i] = a[i] + b[i]
""")


@pytest.fixture
def kfile(tmp_path):
    path = tmp_path / "kfile.py"
    path.write_text(KERNEL_FILE)
    return path


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("poot: error: ") and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_an_unknown_cpu_arch_is_refused_before_llvm_aborts(kfile, tmp_path, capsys):
    import llvmlite.binding as llvm

    assert main(["compile", f"{kfile}::add", "--target", "cpu", "--arch", "bogus", "-o",
                 str(tmp_path / "x.o")]) == 1
    err = one_line_error(capsys)
    assert "'bogus' is not a CPU LLVM knows" in err and f"'{llvm.get_host_cpu_name()}'" in err
    assert not (tmp_path / "x.o").exists()


def test_a_known_cpu_arch_compiles(kfile, tmp_path, capsys):
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86-64-v2 names an x86-64 CPU")
    assert main(["compile", f"{kfile}::add", "--target", "cpu", "--arch", "x86-64-v2", "-o",
                 str(tmp_path / "x.o")]) == 0
    assert (tmp_path / "x.o").stat().st_size > 0 and "not a recognized" not in capsys.readouterr().err


def test_a_file_that_does_not_parse_names_its_line(tmp_path, capsys):
    bad = tmp_path / "syntaxerr.py"
    bad.write_text("import poot as pt\n\ndef f(:\n    pass\n")
    assert main(["compile", str(bad), "--target", "cpu"]) == 1
    err = one_line_error(capsys)
    assert f"{bad}:3:" in err and "does not parse as Python" in err


@pytest.mark.parametrize("target", ["kir", "cpu"])
def test_an_output_path_that_cannot_be_written_is_one_line(kfile, target, capsys):
    assert main(["compile", f"{kfile}::add", "--target", target, "-o", "/nonexistent/dir/x.out"]) == 1
    assert "cannot write '/nonexistent/dir/x.out'" in one_line_error(capsys)


def test_a_root_without_kernels_fails_the_asset_check(tmp_path, capsys):
    for args in (["--check"], []):
        assert main(["regen-kernel-assets", "--root", str(tmp_path / "nonexistent"), *args]) == 1
        assert "has no kernels/ folder" in one_line_error(capsys)
