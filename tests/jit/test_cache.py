"""The artifact caches: memory hits, disk hits across processes, corrupt/truncated entries recompiled,
atomic writes into a 0700 directory, `cache_info` / `cache_clear`."""
import glob
import os
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from poot import devices
from poot.jit.llvm import cache
from poot.jit.llvm.compile import compile_kernel
from poot.jit.runtime.launch import launch

from kir_samples import add_kernel, chain_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "poot-cache"
    monkeypatch.setenv("POOT_CACHE_DIR", str(d))
    monkeypatch.delenv("POOT_DISK_CACHE", raising=False)
    cache.cache_clear(memory=True, disk=False)
    yield d
    cache.cache_clear(memory=True, disk=False)


def _entries(d):
    return glob.glob(str(d / "v1" / "*" / "*.art"))


def test_memory_then_disk_hits(cache_dir):
    k = add_kernel()
    a1 = compile_kernel(k)
    assert len(_entries(cache_dir)) == 1
    hits = cache.cache_info()["memory_hits"]
    assert compile_kernel(k) is a1 and cache.cache_info()["memory_hits"] == hits + 1
    cache.cache_clear(memory=True, disk=False)
    d0 = cache.cache_info()["disk_hits"]
    a2 = compile_kernel(k)
    assert cache.cache_info()["disk_hits"] == d0 + 1 and a2.data == a1.data and a2.entry == a1.entry


def test_kernels_differing_only_in_name_share_one_compile(cache_dir):
    """The steps of a stencil are one kernel body under several names: compiled once, and each
    still runs (the artifact's entry symbol is the first one's)."""
    import dataclasses

    k = add_kernel()
    first = compile_kernel(k)
    misses = cache.cache_info()["misses"]
    other = compile_kernel(dataclasses.replace(k, name="add_again"))
    assert other is first and cache.cache_info()["misses"] == misses
    assert compile_kernel(add_kernel(wg=32)).key != first.key          # another body: another key
    a, b = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    c = np.zeros(64, np.float32)
    dev = devices.get("cpu")
    launch(dev, dataclasses.replace(k, name="add_again"), [dev.wrap(a), dev.wrap(b), dev.wrap(c)], (), 1)
    assert np.array_equal(c, a + 1)


def test_cache_directory_is_private(cache_dir):
    compile_kernel(add_kernel())
    assert stat.S_IMODE(os.stat(cache_dir).st_mode) == 0o700
    for p in _entries(cache_dir):
        assert stat.S_IMODE(os.stat(os.path.dirname(p)).st_mode) == 0o700
    assert not glob.glob(str(cache_dir / "v1" / "*" / ".tmp-*"))   # no temp files left behind


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "empty"])
def test_corrupt_cache_entry_is_recompiled(cache_dir, damage):
    k = add_kernel()
    good = compile_kernel(k)
    (path,) = _entries(cache_dir)
    blob = open(path, "rb").read()
    if damage == "flip":
        blob = blob[:-100] + bytes([blob[-100] ^ 0xFF]) + blob[-99:]
    elif damage == "truncate":
        blob = blob[: len(blob) // 2]
    elif damage == "header":
        blob = blob.replace(b'"key":"', b'"key":"0', 1)     # a header naming another key
    else:
        blob = b""
    open(path, "wb").write(blob)
    cache.cache_clear(memory=True, disk=False)
    before = cache.cache_info()["corrupt"]
    again = compile_kernel(k)
    assert cache.cache_info()["corrupt"] == before + 1
    assert again.data == good.data                       # rebuilt, not the damaged bytes
    assert open(path, "rb").read() != blob               # and the entry rewritten whole
    a, c = np.arange(70, dtype=np.float32), np.zeros(70, np.float32)
    dev = devices.get("cpu")
    launch(dev, k, [dev.wrap(a), dev.wrap(a), dev.wrap(c)], (), 2)
    assert np.array_equal(c, 2 * a)


def test_new_process_hits_the_disk_cache(cache_dir):
    compile_kernel(chain_kernel())
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {HERE!r}); sys.path.insert(0, {ROOT!r})
        from kir_samples import chain_kernel
        from poot.jit.llvm import cache
        from poot.jit.llvm.compile import compile_kernel, get_target
        from poot import devices
        k = chain_kernel(); get_target("cpu"); dev = devices.get("cpu"); dev._engine()
        dev.load(compile_kernel(k))
        info = cache.cache_info()
        print(info["disk_hits"], info["misses"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=dict(os.environ, POOT_CACHE_DIR=str(cache_dir)), check=True).stdout.split()
    assert out[0] == "1" and out[1] == "0", out   # found on disk, nothing rebuilt


def test_key_depends_on_target_and_arch(cache_dir):
    k = add_kernel()
    assert compile_kernel(k, "ptx", arch="sm_80").key != compile_kernel(k, "ptx", arch="sm_90").key
    assert compile_kernel(k, "ptx").key != compile_kernel(k, "cpu").key
    assert len(_entries(cache_dir)) == 3


def test_cache_clear_and_info(cache_dir):
    compile_kernel(add_kernel())
    compile_kernel(chain_kernel())
    info = cache.cache_info()
    assert info["dir"] == str(cache_dir) and info["disk_entries"] == 2 and info["disk_bytes"] > 0
    assert cache.cache_clear() == 2
    assert cache.cache_info()["disk_entries"] == 0 and cache.cache_info()["memory_entries"] == 0


def test_unwritable_cache_dir_does_not_fail_the_compile(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("POOT_CACHE_DIR", str(blocker / "sub"))
    cache.cache_clear(memory=True, disk=False)
    assert compile_kernel(add_kernel()).data


def test_cli_cache_info_and_clear(cache_dir):
    compile_kernel(add_kernel())
    env = dict(os.environ, POOT_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-m", "poot", "cache", "info"], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout
    assert f"dir      {cache_dir}" in out and "entries  1" in out
    out = subprocess.run([sys.executable, "-m", "poot", "cache", "clear"], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True).stdout
    assert "removed 1 cached artifacts" in out and not _entries(cache_dir)


def test_processes_sharing_the_cache_directory(cache_dir):
    """Four processes compile the same kernels into one empty directory at once: all succeed, the
    entries verify, and nothing half-written is left."""
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {HERE!r}); sys.path.insert(0, {ROOT!r})
        from kir_samples import add_kernel, chain_kernel, loops_kernel
        from poot.jit.llvm.compile import compile_kernel
        for k in (add_kernel(), chain_kernel(), loops_kernel()):
            compile_kernel(k)
        print("ok")
    """)
    env = dict(os.environ, POOT_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=env) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 and o.strip() == "ok" for p, (o, _) in zip(procs, outs)), outs
    assert len(_entries(cache_dir)) == 3
    assert not glob.glob(str(cache_dir / "v1" / "*" / ".tmp-*"))
    before = cache.cache_info()["corrupt"]
    for k in (add_kernel(), chain_kernel()):
        compile_kernel(k)
    assert cache.cache_info()["corrupt"] == before and cache.cache_info()["disk_hits"] >= 2


def test_program_cache_eviction_survives_inserts_during_its_scan(monkeypatch):
    """Threads realizing at once (Dask's threaded scheduler) insert programs while another thread's
    eviction scans the cache: the scan must not iterate the dict being grown. An entry whose
    `last_use` inserts another entry stands for the other thread, deterministically."""
    from types import SimpleNamespace

    import poot as pt
    from poot.jit.runtime import execute

    class Busy:
        @property
        def last_use(self):
            execute._PROGRAMS[("inserted", len(execute._PROGRAMS))] = SimpleNamespace(last_use=10**9)
            return -1

    monkeypatch.setattr(execute, "_PROGRAMS", {("busy", 0): Busy(), ("old", 1): SimpleNamespace(last_use=5)})
    monkeypatch.setattr(execute, "MAX_PROGRAMS", 2)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal((pt.asarray(a) * 3.0 - 1.0).numpy(), a * 3 - 1)
    assert ("busy", 0) not in execute._PROGRAMS           # the least recently used went
