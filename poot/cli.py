"""The `poot` command line: devices, compile, regen-kernel-assets, cache, demo, generate, bench."""
from __future__ import annotations

import argparse
import sys

from poot._version import __version__


def _cmd_devices(args) -> int:
    from poot import devices

    for name, ok, detail in devices.availability():
        print(f"{name:8s} {'available  ' if ok else 'unavailable'} {detail}")
    return 0


def _cmd_cache(args) -> int:
    from poot.jit.llvm.cache import cache_clear, cache_info

    if args.action == "clear":
        print(f"removed {cache_clear()} cached artifacts from {cache_info()['dir']}")
    else:
        info = cache_info()
        print(f"dir      {info['dir']}\nentries  {info['disk_entries']}\nbytes    {info['disk_bytes']}")
    return 0


def _cmd_demo(args) -> int:
    from poot.demo import main as run_demo

    return run_demo()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="poot", description="poot: a tracing JIT with a lazy NumPy-like frontend")
    p.add_argument("--version", action="version", version=f"poot {__version__}")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("devices", help="list the devices poot can use here, and why others are unavailable"
                   ).set_defaults(func=_cmd_devices)
    sub.add_parser("demo", help="run a short NumPy-style workload on the default device, check it "
                   "against NumPy and time both").set_defaults(func=_cmd_demo)
    cache = sub.add_parser("cache", help="show or clear the compiled-kernel cache (POOT_CACHE_DIR)")
    cache.add_argument("action", choices=("info", "clear"))
    cache.set_defaults(func=_cmd_cache)
    from poot.kernel.cli import add_commands as _add_kernel_commands  # compile, regen-kernel-assets

    _add_kernel_commands(sub)
    from poot.models.cli import add_commands as _add_model_commands  # generate, bench decode

    _add_model_commands(sub)
    return p


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from poot.errors import PootError

    try:
        return args.func(args) or 0
    except PootError as e:
        print(f"poot: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        if e.filename is None:   # not a path the user named: a real failure, keep its traceback
            raise
        # a file or folder named on the command line that cannot be read or written: one line, not a traceback
        print(f"poot: error: {e.strerror or e}: '{e.filename}'", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
