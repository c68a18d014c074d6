"""Kernel sources (kernels/<family>/*.py), their manifest, and the committed `.kir.json` assets.

Each family folder has a `manifest.py` holding one table, `MANIFEST`: rows of (asset name, source file
in the folder, entry function, destination folder), optionally followed by the tuple of targets the
kernel is built for (a tensor-core kernel only exists for "ptx"; the default is every target). `load_manifest()` aggregates the families into one
list, the single source of truth for which source produces which asset. Every entry has exactly one
committed asset `<destination>/<name>.kir.json`: the entry's KIR in poot's deterministic JSON, trap
sites naming the source as `kernels/<family>/<file>:<line>` so the bytes do not depend on where the
tree lives. `regenerate()` (the `poot regen-kernel-assets` command) rewrites them.

In a source checkout kernels/ and assets/ sit next to the `poot` package; an installed wheel carries
them inside it (`poot/kernels`, `poot/assets`), so an installed poot finds its assets without a checkout.
"""
from __future__ import annotations

import importlib.util
import itertools
import logging
from dataclasses import dataclass
from pathlib import Path

from ...errors import PootError
from ..kir.model import Kernel

log = logging.getLogger("poot.jit.kernel.assets")

FAMILIES = ("contraction", "attention", "movement", "packed", "sampling", "probe")
ASSET_SUFFIX = ".kir.json"
TARGETS = ("cpu", "ptx", "spirv", "amdgcn")
_counter = itertools.count()


@dataclass(frozen=True)
class ManifestEntry:
    name: str            # the asset's name: <destination>/<name>.kir.json
    family: str
    source: str          # the source file, relative to the kernels folder: "<family>/<file>.py"
    entry: str           # the @pt.kernel function in it
    destination: str     # the assets folder, relative to the root holding kernels/
    targets: tuple = TARGETS   # the targets the kernel compiles for

    def builds_for(self, target: str) -> bool:
        return target in self.targets


def root_dir() -> Path:
    """The folder holding kernels/ and assets/: the package itself when installed, else the checkout."""
    pkg = Path(__file__).resolve().parents[2]
    for root in (pkg, pkg.parent):
        if (root / "kernels").is_dir():
            return root
    raise PootError(f"cannot find the kernels/ folder (looked in {pkg} and {pkg.parent}); reinstall poot")


def load_manifest(root: Path | None = None) -> list[ManifestEntry]:
    """Every family's MANIFEST rows, in family order. A family without a folder has no kernels yet."""
    root = Path(root) if root is not None else root_dir()
    entries, seen = [], {}
    for family in FAMILIES:
        path = root / "kernels" / family / "manifest.py"
        if not path.is_file():
            continue
        table = _exec_file(path).get("MANIFEST")
        if not isinstance(table, (tuple, list)):
            raise PootError(f"{path}: defines no MANIFEST table")
        for row in table:
            targets = row[4] if isinstance(row, tuple) and len(row) == 5 else TARGETS
            if not (isinstance(row, tuple) and len(row) in (4, 5) and all(isinstance(x, str) for x in row[:4])
                    and isinstance(targets, tuple) and set(targets) <= set(TARGETS)):
                raise PootError(f"{path}: manifest row {row!r} is not (name, source, entry, destination"
                                f"[, targets among {TARGETS}])")
            name, source, entry, dest = row[:4]
            if name in seen:
                raise PootError(f"{path}: asset name '{name}' is already used by {seen[name]}")
            seen[name] = f"kernels/{family}/{source}"
            entries.append(ManifestEntry(name, family, f"{family}/{source}", entry, dest, targets))
    return entries


def _exec_file(path: Path) -> dict:
    ns: dict = {"__file__": str(path), "__name__": f"poot_manifest_{next(_counter)}"}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return ns


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
    from .api import KernelFunction

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


def asset_path(entry: ManifestEntry, root: Path | None = None) -> Path:
    root = Path(root) if root is not None else root_dir()
    return root / entry.destination / f"{entry.name}{ASSET_SUFFIX}"


def render(kernel: Kernel) -> bytes:
    """The committed bytes of an asset: the deterministic KIR JSON and a final newline."""
    from ..kir.serialize import to_json

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


def load_asset(name: str, root: Path | None = None) -> Kernel:
    """The committed KIR of asset `name` (verified)."""
    from ..kir.serialize import from_json
    from ..kir.verify import verify

    for entry in load_manifest(root):
        if entry.name == name:
            path = asset_path(entry, root)
            if not path.is_file():
                raise PootError(f"asset '{name}' is not committed ({path}); run `poot regen-kernel-assets`")
            kernel = from_json(path.read_text())
            verify(kernel)
            return kernel
    raise PootError(f"no kernel asset named '{name}' in the manifest")
