"""Loading the committed kernel assets: the manifest of kernels/<family>/manifest.py and the verified KIR
of each `assets/<name>.kir.json`.

This is all the compiler needs of the hand-authored kernels (codegen routes GEMV and GEMM to them), so it
lives beside the KIR and returns KIR only; importing kernel sources through the `@kernel` frontend and
regenerating the assets is `poot/kernel/assets.py`'s job.

Each family folder has a `manifest.py` holding one table, `MANIFEST`: rows of (asset name, source file
in the folder, entry function, destination folder), optionally followed by the tuple of targets the
kernel is built for (a tensor-core kernel only exists for "ptx"; the default is every target). A target
may name the GPUs it is built for, "<target>@<arch>" (an AMD matrix-core kernel exists for "amdgcn@gfx942"
but not for every AMDGCN GPU): such an entry builds for that target only where the arch is given.
`load_manifest()` aggregates the families into one list, the single source of truth for which source
produces which asset. In a source checkout kernels/ and assets/ sit next to the `poot` package; an
installed wheel carries them inside it (`poot/kernels`, `poot/assets`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from poot.errors import PootError
from poot.jit.kir.model import Kernel

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

    def builds_for(self, target: str, arch: str | None = None) -> bool:
        """Whether the kernel compiles for `target` on every arch, or on `arch` where one is given."""
        return target in self.targets or (arch is not None and f"{target}@{arch}" in self.targets)


def root_dir() -> Path:
    """The folder holding kernels/ and assets/: the package itself when installed, else the checkout."""
    pkg = Path(__file__).resolve().parents[3]   # poot/jit/kir/assets.py -> poot/
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
                    and isinstance(targets, tuple)
                    and all(isinstance(t, str) and t.partition("@")[0] in TARGETS for t in targets)):
                raise PootError(f"{path}: manifest row {row!r} is not (name, source, entry, destination"
                                f"[, targets among {TARGETS}, each optionally @<arch>])")
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


def asset_path(entry: ManifestEntry, root: Path | None = None) -> Path:
    root = Path(root) if root is not None else root_dir()
    return root / entry.destination / f"{entry.name}{ASSET_SUFFIX}"


def load_asset(name: str, root: Path | None = None) -> Kernel:
    """The committed KIR of asset `name` (verified)."""
    from poot.jit.kir.serialize import from_json
    from poot.jit.kir.verify import verify

    for entry in load_manifest(root):
        if entry.name == name:
            path = asset_path(entry, root)
            if not path.is_file():
                raise PootError(f"asset '{name}' is not committed ({path}); run `poot regen-kernel-assets`")
            kernel = from_json(path.read_text())
            verify(kernel)
            return kernel
    raise PootError(f"no kernel asset named '{name}' in the manifest")
