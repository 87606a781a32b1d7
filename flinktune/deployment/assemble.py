"""Read every deployment file of a run with the reader of its format (``readers.READERS``) and put what
they found into one ``Deployment``."""

from __future__ import annotations

import importlib

from flinktune.deployment.model import Deployment, Found, Process
from flinktune.deployment.readers import READERS, ReadContext
from flinktune.errors import FlinktuneError
from flinktune.record import replace


def _text(path: str) -> str:
    from flinktune.config.textio import read_text_file

    return read_text_file(path).text


def _with_claims(process: Process, claims: dict[str, str]) -> Process:
    """The access modes of claims declared in another file of the run (a PVC beside the workloads)."""
    if not any(m.kind == "pvc" and not m.access and m.source in claims for m in process.mounts):
        return process
    mounts = tuple(replace(m,
                           access=claims[m.source]) if m.kind == "pvc" and not m.access and m.source in claims
                   else m for m in process.mounts)
    return replace(process, mounts=mounts)


def _read(path: str, module: str, kind: str, context: ReadContext) -> Found:
    try:
        return importlib.import_module(module).read(path, _text(path), context)  # type: ignore[no-any-return]
    except (IndexError, ValueError, TypeError, AttributeError, RecursionError) as error:
        raise FlinktuneError(f"could not be read as a {kind} file ({type(error).__name__})") from error


def assemble(files: list[tuple[str, str]], root: str | None) -> Deployment:
    """Read ``files`` ((path, reader name) pairs); the readers of a lower stage first (a Dockerfile before
    the manifests that run its image). A file that cannot be read is listed in ``skipped``."""
    context = ReadContext(root)
    readers = {reader.name: reader for reader in READERS}
    found: list[Found] = []
    read: list[str] = []
    skipped: list[tuple[str, str, int | None]] = []
    for stage in sorted({reader.stage for reader in READERS}):
        for path, kind in files:
            reader = readers.get(kind)
            if reader is None or reader.stage != stage:
                continue
            try:
                found.append(_read(path, reader.module, kind, context))
            except FlinktuneError as error:
                skipped.append((error.file or path, error.message, error.line))
                continue
            except OSError as error:
                skipped.append((path, f"cannot read file: {error.strerror or error}", None))
                continue
            read.append(path)
    claims = {name: access for part in found for name, access in part.claims}
    return Deployment(
        processes=tuple(_with_claims(process, claims) for part in found for process in part.processes),
        services=tuple(service for part in found for service in part.services),
        documents=tuple(document for part in found for document in part.documents),
        files=tuple(read), skipped=tuple(skipped),
        configmaps=tuple(configmap for part in found for configmap in part.configmaps))
