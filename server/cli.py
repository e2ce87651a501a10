"""The `vnpu` command. Subcommands: `version` now; `serve`, `demo`, `bench`, `status` arrive with the daemon."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("vnpu")
    except PackageNotFoundError:  # run from a source tree that was not installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vnpu",
        description="A virtual Ascend NPU: ACL streams, events, aclmdlRI capture and task update, aclnn "
        "operators -- served over the network, no NPU needed.",
    )
    parser.add_argument("--version", action="version", version=f"vnpu {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("version", help="print the vnpu version")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "version":
        print(f"vnpu {package_version()}")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
