"""The version of the installed vnpu distribution (what `vnpu --version`, the daemon's banner and OpenAPI show)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def package_version() -> str:
    try:
        return version("vnpu")
    except PackageNotFoundError:  # run from a source tree that was not installed
        return "0+unknown"
