"""The kernel commands of the `poot` CLI: `poot compile` (the counterpart of the seed's pootc) and
`poot regen-kernel-assets`.

    poot compile FILE[::NAME] --target {kir,llvm,cpu,ptx,spirv,amdgcn} [-o OUT] [--arch ARCH] [--check]

compiles every `@pt.kernel` of FILE (or only NAME). With one kernel OUT is the output file; with several
it is a folder, one `<name><ext>` per kernel; without -o the files go to the current folder. `--check`
validates the output with the target's own tool where it is installed (spirv-val for SPIR-V, ptxas for
PTX) and says so when it is not; a HSACO is checked by reading its ELF (AMD GPU machine, kernel
descriptors, metadata note).
"""
from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

from poot.errors import PootError
from poot.jit.llvm.targets import names as target_names, target_named

KIR = "kir"          # not a compile target: the verified kernel IR itself, as its JSON
TARGETS = (KIR, *target_names())
EXTENSIONS = {KIR: ".kir.json", **{name: target_named(name).file_extension for name in target_names()}}
_counter = itertools.count()


def add_commands(sub) -> None:
    p = sub.add_parser("compile", help="compile the @pt.kernel functions of a Python file for a target")
    p.add_argument("spec", metavar="FILE[::NAME]", help="a Python file, optionally ::NAME of one kernel in it")
    p.add_argument("--target", required=True, choices=TARGETS)
    p.add_argument("-o", "--output", help="output file (one kernel) or folder (several)")
    p.add_argument("--arch", help="target architecture (e.g. sm_90, gfx942, an LLVM CPU name)")
    p.add_argument("--check", action="store_true", help="validate the output with the target's tool "
                   "(spirv-val, ptxas) where installed; a HSACO's ELF is read back")
    p.set_defaults(func=cmd_compile)
    r = sub.add_parser("regen-kernel-assets", help="rewrite assets/<name>.kir.json from the kernel sources")
    r.add_argument("--check", action="store_true", help="only report missing, extra or stale assets")
    r.add_argument("--root", help="the folder holding kernels/ and assets/ (default: this poot's)")
    r.set_defaults(func=cmd_regen)


# --- poot compile ------------------------------------------------------------------------------------
def load_kernels(spec: str) -> list:
    """The KernelFunction objects of FILE (definition order), or just NAME for FILE::NAME."""
    from poot.kernel.api import KernelFunction

    file, _, name = spec.partition("::")
    path = Path(file)
    if not path.is_file():
        raise PootError(f"poot compile: no such file '{file}'")
    mod_name = f"poot_compile_{path.stem}_{next(_counter)}"
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as e:     # the file is not Python: say where, as a compiler would, not a traceback
        where = f"{e.filename or file}:{e.lineno}" + (f":{e.offset}" if e.offset else "")
        raise PootError(f"poot compile: {where}: {e.msg} (the file does not parse as Python)") from None
    except OSError as e:
        raise PootError(f"poot compile: cannot read '{file}': {e.strerror or e}") from None
    finally:
        sys.modules.pop(mod_name, None)
    found = [v for v in vars(module).values() if isinstance(v, KernelFunction)]
    if name:
        found = [k for k in found if k.name == name or k.fn.__name__ == name]
        if not found:
            raise PootError(f"poot compile: '{file}' has no @pt.kernel function named '{name}'")
    elif not found:
        raise PootError(f"poot compile: '{file}' has no @pt.kernel functions")
    return found


def compile_output(kernel, form: str, arch: str | None):
    """The bytes or text of `kernel` (a @pt.kernel function) as `form`: KIR's JSON, or a registered target's
    artifact (through `kernel.compile`, which refuses what the target's consumer cannot build by line)."""
    if form == KIR:
        from poot.jit.kir.serialize import to_json

        return to_json(kernel.kir) + "\n"
    return kernel.compile(form, arch=arch).data


def check_output(path: Path, form: str, arch: str | None) -> str:
    """Validate a written artifact (`form`: KIR or a target name) with the target's own tool; returns a
    line saying what was done."""
    if form == KIR:
        return f"{path}: verified KIR (no external validator for target '{form}')"
    return target_named(form).validate(path, arch)


def cmd_compile(args) -> int:
    kernels = load_kernels(args.spec)
    ext = EXTENSIONS[args.target]
    out = Path(args.output) if args.output else None
    if out is not None and len(kernels) > 1:
        if out.exists() and not out.is_dir():
            raise PootError(f"poot compile: {args.spec} has {len(kernels)} kernels, so -o must be a folder; "
                            f"'{out}' is a file")
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise PootError(f"poot compile: cannot create the folder '{out}': {e.strerror or e}") from None
    for k in kernels:
        data = compile_output(k, args.target, args.arch)
        if out is None:
            path = Path(f"{k.name}{ext}")
        elif len(kernels) > 1 or out.is_dir():
            path = out / f"{k.name}{ext}"
        else:
            path = out
        try:
            if isinstance(data, str):
                path.write_text(data)
            else:
                path.write_bytes(data)
        except OSError as e:
            raise PootError(f"poot compile: cannot write '{path}': {e.strerror or e}") from None
        print(f"{k.name}: {args.target} -> {path}")
        if args.check:
            print(check_output(path, args.target, args.arch))
    return 0


# --- poot regen-kernel-assets ---------------------------------------------------------------------
def cmd_regen(args) -> int:
    from poot.kernel import assets

    root = Path(args.root) if args.root else None
    if root is not None and not (root / "kernels").is_dir():
        raise PootError(f"poot regen-kernel-assets: '{root}' has no kernels/ folder (--root names the folder "
                        f"holding kernels/ and assets/)")
    entries = assets.load_manifest(root)
    if args.check:
        problems = assets.check_assets(root)
        bad = [f"{kind}: {', '.join(names)}" for kind, names in problems.items() if names]
        if bad:
            print("kernel assets out of date (run `poot regen-kernel-assets`):\n  " + "\n  ".join(bad))
            return 1
        print(f"kernel assets up to date ({len(entries)} entries)")
        return 0
    results = assets.regenerate(root)
    changed = [e.name for e, ch in results if ch]
    for name in changed:
        print(f"rewrote {name}")
    extra = assets.unlisted_assets(root)
    for path in extra:
        print(f"warning: {path} has no manifest entry (remove it, or add an entry)")
    print(f"{len(changed)} of {len(results)} kernel assets rewritten")
    return 1 if extra else 0
