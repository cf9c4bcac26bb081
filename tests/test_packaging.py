"""The package installs cleanly: an SPDX license, every data folder declared (issue 12 item 7).

setuptools deprecates a license table and warns ("Package would be ignored") about
data folders that are not declared packages; a wheel built from such a configuration
may miss its data. These checks read pyproject.toml the way setuptools does.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = CONFIG["tool"]["setuptools"]


def source_dir(package: str) -> Path:
    """Where setuptools finds ``package``, through ``package-dir``."""
    mapping: dict[str, str] = SETUPTOOLS["package-dir"]
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in mapping:
            return ROOT / mapping[prefix] / Path(*parts[n:])
    return ROOT / Path(*parts)


def test_license_is_an_spdx_string() -> None:
    assert isinstance(CONFIG["project"]["license"], str)


def test_every_package_data_entry_is_a_declared_package_with_files() -> None:
    packages = set(SETUPTOOLS["packages"])
    for package, patterns in SETUPTOOLS["package-data"].items():
        assert package in packages, package
        folder = source_dir(package)
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches nothing"


def test_every_folder_with_data_files_under_a_package_is_declared() -> None:
    packages = set(SETUPTOOLS["packages"])
    declared = {source_dir(p).resolve() for p in packages}
    for package in packages:
        for folder in source_dir(package).iterdir():
            if not folder.is_dir() or folder.name.startswith((".", "__")):
                continue
            has_files = any(f.is_file() for f in folder.rglob("*") if "__pycache__" not in f.parts)
            if has_files:
                assert folder.resolve() in declared, f"{folder.relative_to(ROOT)} is not a package"
