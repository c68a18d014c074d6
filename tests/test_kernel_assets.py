"""The kernel asset manifest: every entry's committed assets/<name>.kir.json is what a fresh import of
its source produces, byte for byte, and each destination folder holds exactly the manifest's entries."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from poot.jit.kir import assets as kir_assets
from poot.kernel import assets
from poot.jit.kir.serialize import from_json

ENTRIES = assets.load_manifest()


def test_manifest_aggregates_the_family_tables():
    families = {e.family for e in ENTRIES}
    assert {"probe", "contraction"} <= families
    assert families <= set(kir_assets.FAMILIES)
    names = [e.name for e in ENTRIES]
    assert len(names) == len(set(names))
    assert {"probe_add", "probe_trap", "probe_atomic_add", "probe_row_sum", "probe_copy", "probe_loop_break",
            "gemv_f32"} <= set(names)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_asset_regenerates_byte_for_byte(entry):
    path = assets.asset_path(entry)
    assert path.is_file(), f"{entry.name}: no committed asset {path}; run `poot regen-kernel-assets`"
    fresh = assets.render(assets.import_entry(entry))
    assert path.read_bytes() == fresh, (f"{entry.name}: committed {path.name} differs from a fresh import of "
                                        f"kernels/{entry.source}; run `poot regen-kernel-assets`")


def test_assets_folder_holds_exactly_the_manifest_entries():
    # (that each is current is test_asset_regenerates_byte_for_byte's, and the CLI check's below)
    assert [e.name for e in ENTRIES if not assets.asset_path(e).is_file()] == []
    assert assets.unlisted_assets() == []


def _copy_tree(tmp_path: Path) -> Path:
    """A tree of the probe family alone (its kernels and their assets): what the manifest checks and
    regeneration do to a tree is seen there at a small fraction of importing every family's kernels."""
    root = assets.root_dir()
    shutil.copytree(root / "kernels" / "probe", tmp_path / "kernels" / "probe", symlinks=False)
    for entry in ENTRIES:
        if entry.family == "probe":
            dest = assets.asset_path(entry, tmp_path)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(assets.asset_path(entry), dest)
    return tmp_path


def test_an_extra_or_missing_asset_fails_by_name(tmp_path):
    root = _copy_tree(tmp_path)
    (root / "assets" / "probe_copy.kir.json").unlink()
    (root / "assets" / "stray_kernel.kir.json").write_text("{}")
    problems = assets.check_assets(root)
    assert problems["missing"] == ["probe_copy"]
    assert problems["extra"] == ["assets/stray_kernel.kir.json"]


def test_a_stale_asset_is_named_and_regeneration_fixes_it(tmp_path):
    root = _copy_tree(tmp_path)
    src = root / "kernels" / "probe" / "add.py"
    src.write_text(src.read_text().replace("c[i] = a[i] + b[i]", "c[i] = a[i] - b[i]"))
    assert assets.check_assets(root)["stale"] == ["probe_add"]
    changed = {e.name for e, ch in assets.regenerate(root) if ch}
    assert changed == {"probe_add"}
    assert assets.check_assets(root) == {"missing": [], "extra": [], "stale": []}
    assert '"op":"sub"' in (root / "assets" / "probe_add.kir.json").read_text()


def test_committed_assets_load_as_verified_kir():
    for entry in ENTRIES:
        kernel = kir_assets.load_asset(entry.name)
        assert kernel == from_json(assets.asset_path(entry).read_text())
        assert kernel.name == entry.name


def test_asset_trap_sites_name_the_source_relative_to_the_tree():
    kernel = kir_assets.load_asset("probe_trap")
    wheres = {t.where for t in kernel.traps}
    assert all(w.startswith("kernels/probe/trap.py:") for w in wheres), wheres
    assert any("negative input" in t.what for t in kernel.traps)


def test_unknown_asset_name_is_refused():
    with pytest.raises(kir_assets.PootError, match="no kernel asset named 'nope'"):
        kir_assets.load_asset("nope")


def run_poot(*argv, cwd=None):
    """`python -m poot ...` in a subprocess that imports this checkout's poot."""
    import os

    import poot

    env = dict(os.environ)
    repo = str(Path(poot.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "poot", *argv], capture_output=True, text=True, cwd=cwd, env=env)


def test_regen_kernel_assets_command_reports_up_to_date():
    out = run_poot("regen-kernel-assets", "--check")
    assert out.returncode == 0, out.stderr
    assert "up to date" in out.stdout


def test_regen_kernel_assets_command_names_a_stale_asset(tmp_path):
    root = _copy_tree(tmp_path)
    (root / "assets" / "probe_add.kir.json").write_text("{}\n")
    out = run_poot("regen-kernel-assets", "--check", "--root", str(root))
    assert out.returncode == 1 and "stale: probe_add" in out.stdout
    out = run_poot("regen-kernel-assets", "--root", str(root))
    assert out.returncode == 0 and "rewrote probe_add" in out.stdout
    assert assets.check_assets(root) == {"missing": [], "extra": [], "stale": []}


def test_package_carries_kernels_and_assets():
    """The wheel maps kernels/ and assets/ into the package (poot/kernels, poot/assets)."""
    import importlib.resources

    pkg = importlib.resources.files("poot")
    for entry in ENTRIES:
        assert (pkg / "kernels" / entry.source).is_file(), entry.source
        assert (pkg / "assets" / f"{entry.name}.kir.json").is_file(), entry.name
