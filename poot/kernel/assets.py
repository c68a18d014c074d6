"""Kernel sources (kernels/<family>/*.py) imported through the `@kernel` frontend, and the committed
`.kir.json` assets they produce.

Every manifest entry (poot/jit/kir/assets.py reads the manifest and loads assets) has exactly one
committed asset `<destination>/<name>.kir.json`: the entry's KIR in poot's deterministic JSON, trap
sites naming the source as `kernels/<family>/<file>:<line>` so the bytes do not depend on where the
tree lives. `regenerate()` (the `poot regen-kernel-assets` command) rewrites them; `check_assets()`
says which are missing, extra or stale.
"""
from __future__ import annotations

import importlib.util
import itertools
import logging
from pathlib import Path

from poot.errors import PootError
from poot.jit.kir.assets import ASSET_SUFFIX, ManifestEntry, asset_path, load_manifest, root_dir
from poot.jit.kir.model import Kernel

log = logging.getLogger("poot.kernel.assets")

_counter = itertools.count()


def load_source(entry: ManifestEntry, root: Path | None = None):
    """Import the entry's source file fresh (a new module object each call) and return the module."""
    root = Path(root) if root is not None else root_dir()
    path = root / "kernels" / entry.source
    if not path.is_file():
        raise PootError(f"manifest entry '{entry.name}': source kernels/{entry.source} does not exist")
    spec = importlib.util.spec_from_file_location(f"poot_kernels.{entry.family}.{path.stem}_{next(_counter)}",
                                                  path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry_function(entry: ManifestEntry, module):
    from poot.kernel.api import KernelFunction

    fn = getattr(module, entry.entry, None)
    if not isinstance(fn, KernelFunction):
        raise PootError(f"manifest entry '{entry.name}': kernels/{entry.source} has no @pt.kernel function "
                        f"'{entry.entry}'")
    return fn


def import_entry(entry: ManifestEntry, root: Path | None = None, module=None) -> Kernel:
    """The entry's KIR, imported fresh from its source, named as its asset."""
    module = module if module is not None else load_source(entry, root)
    fn = entry_function(entry, module)
    return fn.imported(name=entry.name, display=f"kernels/{entry.source}").kernel


def render(kernel: Kernel) -> bytes:
    """The committed bytes of an asset: the deterministic KIR JSON and a final newline."""
    from poot.jit.kir.serialize import to_json

    return (to_json(kernel) + "\n").encode("ascii")


def regenerate(root: Path | None = None) -> list[tuple[ManifestEntry, bool]]:
    """Rewrite every asset from its source; returns (entry, changed) per entry. Files in a destination
    folder that no entry names are reported (logged) but left alone: the asset test fails on them."""
    root = Path(root) if root is not None else root_dir()
    out = []
    for entry in load_manifest(root):
        data = render(import_entry(entry, root))
        path = asset_path(entry, root)
        changed = not path.is_file() or path.read_bytes() != data
        if changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        out.append((entry, changed))
    for extra in unlisted_assets(root):
        log.warning("asset %s has no manifest entry", extra)
    return out


def unlisted_assets(root: Path | None = None) -> list[str]:
    """Asset files in the destination folders that no manifest entry produces."""
    root = Path(root) if root is not None else root_dir()
    entries = load_manifest(root)
    listed = {asset_path(e, root) for e in entries}
    out = []
    for dest in sorted({e.destination for e in entries} | {"assets"}):
        folder = root / dest
        if folder.is_dir():
            out += [str(p.relative_to(root)) for p in sorted(folder.glob(f"*{ASSET_SUFFIX}")) if p not in listed]
    return out


def check_assets(root: Path | None = None) -> dict[str, list[str]]:
    """What is wrong with the committed assets: {"missing": [...], "extra": [...], "stale": [...]} (names
    of entries without a committed file, files without an entry, and files whose bytes differ from a
    fresh import of their source)."""
    root = Path(root) if root is not None else root_dir()
    missing, stale = [], []
    for entry in load_manifest(root):
        path = asset_path(entry, root)
        if not path.is_file():
            missing.append(entry.name)
        elif path.read_bytes() != render(import_entry(entry, root)):
            stale.append(entry.name)
    return {"missing": missing, "extra": unlisted_assets(root), "stale": stale}


