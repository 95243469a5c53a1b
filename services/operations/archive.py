"""Reading a backup archive safely, in two passes (docs/operations.md "Backup and restore"; docs/api.md §16).

`survey` writes nothing; it reads the stream to its very end, so that gzip checks its CRC and length and tarfile
cannot stop quietly at a damaged header. `unpack` writes a member only once its header size has matched the
manifest's. Files are fsynced as written: a journal names them next.
"""

import gzip
import hashlib
import json
import os
import re
import tarfile
import zlib
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO

from services.operations.backup import CHUNK, MANIFEST

SCOPES = ("review", "library", "feedback")
INSTANCE_FILES = ("review.db", "secret_key", "config.py")
# A manifest is bounded by the archive it ends (docs/api.md §16): checked before a byte of it is parsed, so
# a crafted one can neither recurse (`[` x 200,000) nor parse a few hundred KB of archive into gigabytes.
MANIFEST_BASE = 8 * 1024 * 1024  # counts, rows and missingFiles: ~130,000 names of files that were gone
MANIFEST_PER_MEMBER = 1024  # a file's entry is ~180 bytes: its name, SHA-256 and size
MANIFEST_DEPTH = 3  # {"files": {name: {"sha256", "size"}}}, {"counts": {"rows": {...}}}
MANIFEST_CONTAINERS = 8  # objects and arrays besides one per file: the top, files, counts, rows, missingFiles
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # after the opening quote, to the closing one
_NOT_BRACKET = re.compile(rb"[^\[\]{}]")
_INNERMOST = re.compile(rb"\[\]|\{\}")
KINDS = {
    tarfile.DIRTYPE: "a folder",
    tarfile.SYMTYPE: "a symbolic link",
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a device",
    tarfile.BLKTYPE: "a device",
    tarfile.FIFOTYPE: "a FIFO",
    tarfile.CONTTYPE: "a contiguous file",
}

Destination = Callable[[tuple[str, ...]], Path | None]  # where a member's parts go (None: checked only)


class RestoreRefused(Exception):
    """The archive or the target is not fit; nothing was changed. str() names the problem."""


class _Stream(gzip.GzipFile):
    """The archive's tar stream; remembers the last block-sized read (the header tarfile tried last)."""

    last_block = b""

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        if size == tarfile.BLOCKSIZE:
            self.last_block = data
        return data


@dataclass
class Survey:
    sizes: dict[str, int] = field(default_factory=dict)  # every member but the manifest: its header's size
    manifest: object = None


def _kind(member: tarfile.TarInfo) -> str | None:
    """What a member is, when it is not a plain file."""
    if member.issparse():
        return "a sparse file"
    if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
        return None
    return KINDS.get(member.type, f"an entry of type {member.type!r}")


def place(member: tarfile.TarInfo) -> tuple[str, ...]:
    """The member's path parts ("instance"|"uploads", ...), () for the manifest; refuses what a backup never holds."""
    name = member.name
    if kind := _kind(member):
        raise RestoreRefused(f"the archive holds {name!r} as {kind}; a backup holds only plain files")
    if name == MANIFEST:
        return ()
    path = PurePosixPath(name)
    parts = path.parts
    if str(path) != name or path.is_absolute() or ".." in parts:
        raise RestoreRefused(f"the archive holds {name!r}, a path outside the instance and uploads folders")
    if parts[0] == "instance" and len(parts) == 2 and parts[1] in INSTANCE_FILES:
        return parts
    if parts[0] == "uploads" and len(parts) >= 3 and parts[1] in SCOPES:
        return parts
    if parts[0] == "uploads" and len(parts) == 2 and parts[1] in SCOPES:
        raise RestoreRefused(
            f"the archive holds {name!r} as a file; in a backup it is the folder of {parts[1]} uploads"
        )
    raise RestoreRefused(f"the archive holds {name!r}, which a backup never holds")


def _damaged(exc: BaseException) -> RestoreRefused:
    if isinstance(exc, EOFError):
        return RestoreRefused(f"the archive is truncated or damaged: its gzip stream ends early ({exc})")
    if isinstance(exc, gzip.BadGzipFile) and str(exc).startswith("Not a gzipped file"):
        return RestoreRefused(f"the archive is not a .tar.gz, or its start is damaged ({exc})")
    return RestoreRefused(f"the archive is damaged ({type(exc).__name__}: {exc})")


def _members(handle: IO[bytes], visit: Callable[[tarfile.TarFile, tarfile.TarInfo], None]) -> None:
    """Every member of the archive to `visit`, then the stream to its end (gzip checks CRC and length there)."""
    handle.seek(0)
    stream = _Stream(fileobj=handle, mode="rb")
    try:
        with tarfile.open(fileobj=stream, mode="r:") as archive:
            for member in archive:
                visit(archive, member)
        if any(stream.last_block):  # tarfile ends quietly at a header it cannot read
            raise RestoreRefused(f"the archive is damaged: the member header at byte {archive.offset} is unreadable")
        while chunk := stream.read(CHUNK):
            if any(chunk):
                raise RestoreRefused("the archive is damaged: data follows the end of its members")
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise _damaged(exc) from None


def survey(handle: IO[bytes]) -> Survey:
    """Pass one: the members' names and sizes and the manifest; nothing written."""
    found = Survey()
    folders: set[str] = set()

    def visit(archive: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        parts, name = place(member), member.name
        if name in found.sizes or (not parts and found.manifest is not None):
            raise RestoreRefused(f"the archive holds {name} twice: it is damaged")
        if not parts:
            files = len(found.sizes)  # the manifest is the last member: every file is counted
            if member.size > MANIFEST_BASE + files * MANIFEST_PER_MEMBER:
                raise RestoreRefused(
                    f"manifest.json is damaged: {member.size} bytes, more than a backup of {files} files has"
                )
            data = archive.extractfile(member).read(member.size)  # type: ignore[union-attr]  # a plain file
            _check_shape(data, files)
            try:
                found.manifest = json.loads(data)
            except (ValueError, UnicodeDecodeError):
                raise RestoreRefused("manifest.json is damaged: it is not valid JSON") from None
            return
        parents = {"/".join(parts[:end]) for end in range(3, len(parts))}
        if name in folders or parents & found.sizes.keys():
            raise RestoreRefused(f"the archive holds {name} both as a file and as a folder: it is damaged")
        folders.update(parents)
        found.sizes[name] = member.size

    _members(handle, visit)
    return found


def _outside_strings(data: bytes) -> bytes:
    """The manifest's bytes outside its JSON strings, each string scanned once from its opening quote (a
    search from every quote made `{` + `\\"` x 80,000 take 18 s); an unterminated string is refused."""
    parts, position = [], 0
    while (start := data.find(b'"', position)) != -1:
        parts.append(data[position:start])
        closed = _STRING_REST.match(data, start + 1)
        if closed is None:
            raise RestoreRefused("manifest.json is damaged: a string in it never ends")
        position = closed.end()
    parts.append(data[position:])
    return b"".join(parts)


def _check_shape(data: bytes, files: int) -> None:
    """Refuse a manifest nested deeper than a backup's, or with more objects and arrays than its files need,
    before json.loads recurses into it: brackets outside strings are peeled one level per pass."""
    brackets = _NOT_BRACKET.sub(b"", _outside_strings(data))
    remaining = brackets
    for _ in range(MANIFEST_DEPTH):
        remaining, peeled = _INNERMOST.subn(b"", remaining)
        if not peeled:
            break
    if remaining:
        raise RestoreRefused(
            f"manifest.json is damaged: it is nested deeper than {MANIFEST_DEPTH} levels, "
            "as no backup's is, or its brackets do not match"
        )
    if len(brackets) // 2 > files + MANIFEST_CONTAINERS:
        raise RestoreRefused(
            f"manifest.json is damaged: it holds more objects and arrays than a backup of {files} files has"
        )


def _copy(source: IO[bytes], target: Path | None, size: int) -> str:
    """At most `size` bytes of `source` into the new file `target` (0600, fsynced); their SHA-256."""
    digest, left = hashlib.sha256(), size
    out = None if target is None else os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")
    with out or nullcontext():
        if out:
            os.fchmod(out.fileno(), 0o600)  # whatever the umask
        while left and (chunk := source.read(min(CHUNK, left))):
            digest.update(chunk)
            left -= len(chunk)
            if out:
                out.write(chunk)
        if out:
            out.flush()
            os.fsync(out.fileno())
    return digest.hexdigest()


def private_folder(path: Path) -> None:
    """`path` and its missing parents, each 0700 whatever the umask."""
    if path.is_dir():
        return
    private_folder(path.parent)
    path.mkdir(mode=0o700)
    os.chmod(path, 0o700)


def missing_top(path: Path) -> Path | None:
    """The topmost folder that making `path` would create (None: it exists)."""
    if path.exists():
        return None
    while not path.parent.exists():
        path = path.parent
    return path


def fsync_folder(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def unpack(
    handle: IO[bytes],
    listed: dict[str, dict],
    destination: Destination,
    progress: Callable[[int, int], None] | None = None,
) -> set[str]:
    """Pass two: every member the manifest lists to destination(its parts); the names unpacked."""
    done: set[str] = set()

    def visit(archive: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        parts, name = place(member), member.name
        if not parts:
            return
        entry = listed.get(name)
        if entry is None or name in done:
            raise RestoreRefused(f"{name} is in the archive but not in the manifest")
        if member.size != entry["size"]:
            raise RestoreRefused(
                f"{name} holds {member.size} bytes, the manifest says {entry['size']}: the archive is damaged"
            )
        target = destination(parts)
        if target is not None:
            private_folder(target.parent)
        source = archive.extractfile(member)
        assert source is not None  # a plain file (place())
        if _copy(source, target, entry["size"]) != entry["sha256"]:
            raise RestoreRefused(f"{name} does not match its SHA-256 in the manifest: the archive is damaged")
        done.add(name)
        if progress:
            progress(len(done), len(listed))

    _members(handle, visit)
    return done


def fsync_tree(root: Path) -> None:
    """Every folder under `root` (files were fsynced as written): the names are on disk too."""
    for folder, _names, _files in os.walk(root):
        fsync_folder(Path(folder))
