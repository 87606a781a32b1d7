"""Reading a user's config file as text, safely, and splitting it into lines the way Flink does.

Everything that can go wrong with the bytes (missing, a directory, binary, not UTF-8, too big)
becomes one ``ConfigError`` naming the file and, where it helps, the line.

Line breaks are ``\\r\\n``, ``\\r`` or ``\\n``: what Java's ``BufferedReader.readLine`` (the legacy
flink-conf.yaml parser) and YAML 1.2 both count. ``str.splitlines`` is not used because it also
breaks at form feeds, ``\\x1c`` and U+2028, which Flink does not.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from pathlib import Path

from flinktune.errors import ConfigError
from flinktune.record import Record, store

# Standard-YAML files are parsed whole (PyYAML builds a node tree), so they have a size cap.
# snakeyaml-engine, which Flink uses, refuses documents over 3 Mi code points by default; a cap
# well above that costs nothing real and keeps a hostile file from taking the machine.
MAX_YAML_BYTES = 8 * 1024 * 1024
# The flat reader streams, but one line is still held in memory at a time.
MAX_LINE_CHARS = 1024 * 1024
# A whole UTF-16 file is decoded at once (rare encoding, no streaming decoder worth the code).
MAX_WHOLE_FILE_BYTES = 64 * 1024 * 1024
_SNIFF_BYTES = 64 * 1024
_READ_CHUNK = 1024 * 1024


class TextFile(Record):
    """A decoded file plus what is needed to encode it back byte for byte."""

    __slots__ = _fields = ("text", "encoding", "bom")
    text: str          # without the byte-order mark
    encoding: str      # "utf-8", "utf-16-le" or "utf-16-be"
    bom: bytes         # the byte-order mark the file started with (b"" if none)

    def __init__(self, text: str, encoding: str, bom: bytes) -> None:
        store(self, (text, encoding, bom))

    def encode(self, text: str) -> bytes:
        """Bytes for ``text`` in this file's encoding, with its BOM."""
        try:
            return self.bom + text.encode(self.encoding)
        except UnicodeEncodeError as exc:  # lone surrogates cannot be written
            raise ConfigError(f"text cannot be encoded as {self.encoding}: {exc.reason}") from exc


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines with their endings kept (``\\r\\n``, ``\\r``, ``\\n``); ``"".join`` gives ``text`` back."""
    lines: list[str] = []
    start = 0
    for match in _LINE_BREAK.finditer(text):
        end = match.end()
        lines.append(text[start:end])
        start = end
    if start < len(text):
        lines.append(text[start:])
    return lines


def strip_eol(line: str) -> str:
    """The line without its line break."""
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def line_ending(line: str) -> str:
    return line[len(strip_eol(line)):]


def dominant_eol(text: str) -> str:
    """The line ending new lines should use: the file's own (CRLF if most lines have it)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if crlf > lf and crlf >= cr:
        return "\r\n"
    if cr > lf and cr > crlf:
        return "\r"
    return "\n"


def line_of_index(text: str, index: int) -> int:
    """1-based line number of character ``index`` in ``text`` (Flink's line breaks)."""
    head = text[:index]
    crlf = head.count("\r\n")
    return head.count("\n") + head.count("\r") - crlf + 1


def _check_path(path: Path) -> None:
    name = str(path)
    try:
        if not path.exists():
            raise ConfigError("file does not exist", file=name)
        if path.is_dir():
            raise ConfigError("is a directory, not a config file", file=name)
        if not path.is_file():
            raise ConfigError("is not a regular file", file=name)
    except OSError as exc:
        raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=name) from exc


def _open(path: Path):
    try:
        return open(path, "rb")
    except OSError as exc:
        raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=str(path)) from exc


def sniff_head(path: str | os.PathLike[str]) -> tuple[bytes, int]:
    """The first bytes of the file (for format detection) and its size."""
    p = Path(path)
    _check_path(p)
    with _open(p) as fh:
        try:
            head = fh.read(_SNIFF_BYTES)
            size = os.fstat(fh.fileno()).st_size
        except OSError as exc:
            raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=str(p)) from exc
    return head, size


def _bom_encoding(head: bytes) -> tuple[str, bytes]:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", codecs.BOM_UTF8
    if head.startswith(codecs.BOM_UTF16_LE) and not head.startswith(codecs.BOM_UTF32_LE):
        return "utf-16-le", codecs.BOM_UTF16_LE
    if head.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", codecs.BOM_UTF16_BE
    return "utf-8", b""


def _decode_error(file: str, data: bytes, exc: UnicodeDecodeError, first_line: int = 1) -> ConfigError:
    """'not valid UTF-8: byte 0xXX at byte M of the line' with the line number."""
    before = data[:exc.start]
    line = first_line + before.count(b"\n")
    column = exc.start - (before.rfind(b"\n") + 1) + 1
    bad = data[exc.start:exc.start + 1].hex()
    return ConfigError(f"is not valid UTF-8: byte 0x{bad} at byte {column} of the line "
                       "(save the file as UTF-8)", file=file, line=line)


def _binary_error(file: str, data: bytes, first_line: int = 1) -> ConfigError:
    pos = data.find(b"\x00")
    line = first_line + data[:pos].count(b"\n")
    return ConfigError("looks like a binary file (contains NUL bytes), not a Flink config "
                       "(UTF-16 and UTF-32 files need a byte-order mark)", file=file, line=line)


def decode_bytes(data: bytes, file: str) -> TextFile:
    """Decode a whole file: UTF-8 (BOM allowed) or UTF-16 with a BOM; anything else is a ConfigError."""
    encoding, bom = _bom_encoding(data[:4])
    body = data[len(bom):]
    if encoding.startswith("utf-16"):
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"is not valid {encoding.upper()} (byte {exc.start + len(bom)})",
                              file=file) from exc
        if "\x00" in text:
            raise ConfigError("contains NUL characters; not a Flink config", file=file,
                              line=line_of_index(text, text.index("\x00")))
        return TextFile(text, encoding, bom)
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise ConfigError("is UTF-32 encoded; save it as UTF-8", file=file)
    if b"\x00" in body:
        raise _binary_error(file, body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(file, body, exc) from exc
    return TextFile(text, encoding, bom)


def read_text_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_WHOLE_FILE_BYTES) -> TextFile:
    """The whole file decoded (for YAML, manifests and the writer); bounded by ``max_bytes``."""
    p = Path(path)
    _check_path(p)
    with _open(p) as fh:
        try:
            data = fh.read(max_bytes + 1)
        except OSError as exc:
            raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=str(p)) from exc
    if len(data) > max_bytes:
        raise ConfigError(f"is larger than {max_bytes // (1024 * 1024)} MiB; too large for this format",
                          file=str(p))
    return decode_bytes(data, str(p))


def iter_file_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """Stream a file's lines (without line breaks), decoded, with bounded memory.

    Used by the flat reader so a 100 MB flink-conf.yaml costs one line of memory at a time.
    Lines longer than ``MAX_LINE_CHARS`` are refused with a ConfigError.
    """
    p = Path(path)
    name = str(p)
    _check_path(p)
    with _open(p) as fh:
        head = fh.read(4)
        encoding, bom = _bom_encoding(head)
        if encoding.startswith("utf-16") or head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
            # Rare: decode whole (bounded) and split.
            fh.close()
            decoded = read_text_file(p)
            for line in split_lines(decoded.text):
                yield strip_eol(line)
            return
        fh.seek(len(bom))
        yield from _stream_utf8_lines(fh, name)


def _stream_utf8_lines(fh, name: str) -> Iterator[str]:
    line_no = 1
    pending = b""          # bytes of the current, unfinished line
    after_cr = False       # the previous chunk ended in "\r": a following "\n" belongs to it
    while True:
        try:
            chunk = fh.read(_READ_CHUNK)
        except OSError as exc:
            raise ConfigError(f"cannot be read: {exc.strerror or exc}", file=name, line=line_no) from exc
        if not chunk:
            break
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        pos = 0
        n = len(chunk)
        while pos < n:
            nl = chunk.find(b"\n", pos)
            cr = chunk.find(b"\r", pos)
            if nl < 0 and cr < 0:
                pending += chunk[pos:]
                break
            if cr < 0 or (0 <= nl < cr):
                end, nxt = nl, nl + 1
            else:
                end = cr
                nxt = cr + 2 if cr + 1 < n and chunk[cr + 1:cr + 2] == b"\n" else cr + 1
            raw = pending + chunk[pos:end]
            pending = b""
            yield _decode_line(raw, name, line_no)
            line_no += 1
            pos = nxt
        if len(pending) > MAX_LINE_CHARS * 4:
            raise ConfigError(f"line is longer than {MAX_LINE_CHARS} characters; not a Flink config",
                              file=name, line=line_no)
    if pending:
        yield _decode_line(pending, name, line_no)


def _decode_line(raw: bytes, name: str, line_no: int) -> str:
    if b"\x00" in raw:
        raise _binary_error(name, raw, first_line=line_no)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(name, raw, exc, first_line=line_no) from exc
    if len(text) > MAX_LINE_CHARS:
        raise ConfigError(f"line is longer than {MAX_LINE_CHARS} characters; not a Flink config",
                          file=name, line=line_no)
    return text
