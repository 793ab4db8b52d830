"""Stream the whole lines of a rollout file in batches, never holding a large file in memory.

Both the fast index scanner and the full transcript reader sit on this. It knows the three
things about bytes on disk that the rest of memdeck should not have to:

* `.jsonl.zst` files are decompressed on the fly (Codex compresses cold rollouts in place);
* a last line without its newline is *pending* (Codex may still be writing it): it is not
  consumed, so the next incremental read starts at its first byte;
* a line longer than `max_line` is skipped without being held, and reported.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Protocol

CHUNK = 1 << 20
MAX_LINE = 16 << 20  # a longer line is skipped (a 50 MB tool output is not a rollout record)


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return str(path).endswith(".zst")


@dataclass
class StreamState:
    """What the stream found besides lines; filled in as it goes."""

    end_offset: int = 0  # offset just past the last complete line (plain files)
    pending_bytes: int = 0  # size of an unterminated last line, 0 when none
    error: str | None = None  # a read or decompression error that stopped the stream
    head: bytes = b""  # the file's first bytes, when the stream started at offset 0


@dataclass
class Batch:
    """Whole lines, or one oversized line that was skipped (`oversized` = its size).

    Batches carry no line numbers: counting newlines costs a pass over every byte, and the
    index scanner learns the count for free from the JSON validator. Consumers number lines.
    """

    start_offset: int  # byte offset of the first line (in the decompressed stream for .zst)
    data: bytes  # whole lines joined by b"\n", without the last one's newline
    oversized: int = 0

    @property
    def lines(self) -> list[bytes]:
        return self.data.split(b"\n")


class _Reader(Protocol):
    """What the stream needs of an open rollout: a plain file or a decompressing one."""

    def read(self, n: int) -> bytes: ...

    def seek(self, offset: int) -> None: ...

    def close(self) -> None: ...


class _ZstdReader:
    """Decompress a `.jsonl.zst` as it is read, across frames; a cut-off frame is an error."""

    def __init__(self, f: BinaryIO) -> None:
        import zstandard

        self._new = zstandard.ZstdDecompressor().decompressobj
        self._f = f
        self._d = self._new()
        self._started = False
        self._buf = b""

    def read(self, n: int) -> bytes:
        while len(self._buf) < n:
            raw = self._f.read(1 << 16)
            if not raw:
                if self._started and not self._d.eof:
                    raise ValueError("the compressed data ends in the middle of a frame "
                                     "(truncated .zst)")
                break
            out = self._d.decompress(raw)
            self._started = True
            while self._d.eof and self._d.unused_data:  # the next frame
                rest = self._d.unused_data
                self._d = self._new()
                out += self._d.decompress(rest)
            self._buf += out
        data, self._buf = self._buf[:n], self._buf[n:]
        return data

    def seek(self, offset: int) -> None:  # pragma: no cover - compressed files start at 0
        raise OSError("cannot seek in a compressed rollout")

    def close(self) -> None:
        self._f.close()


class _RawReader:
    """Unbuffered reads straight from the descriptor: the index opens 10,000 files a run,
    and Python's buffered-file machinery costs more per file than the reads themselves."""

    __slots__ = ("_fd",)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))

    def read(self, n: int) -> bytes:
        return os.read(self._fd, n)

    def seek(self, offset: int) -> None:
        os.lseek(self._fd, offset, os.SEEK_SET)

    def close(self) -> None:
        os.close(self._fd)


def _open(path: str | os.PathLike[str]) -> _Reader:
    if not is_compressed(path):
        return _RawReader(path)
    return _ZstdReader(open(path, "rb"))  # noqa: SIM115


HEAD_BYTES = 4096


def read_head(path: str | os.PathLike[str], n: int = HEAD_BYTES) -> bytes:
    """The first `n` bytes (decompressed); b"" when they cannot be read."""
    try:
        f = _open(path)
    except OSError:
        return b""
    try:
        return f.read(n)
    except Exception:  # a damaged .zst is reported by the reader, not here
        return b""
    finally:
        f.close()


def looks_binary(head: bytes) -> bool:
    """Binary data (or a file zero-filled by a crash), not a rollout with one damaged line:
    a NUL in the first 4 KiB, and a first line that is not even the start of a JSON object."""
    if b"\x00" not in head:
        return False
    first = head.split(b"\n", 1)[0]
    return b"\x00" in first or not first.lstrip().startswith(b"{")


def iter_batches(
    path: str | os.PathLike[str],
    state: StreamState,
    start_offset: int = 0,
    max_line: int = MAX_LINE,
    chunk: int = CHUNK,
) -> Iterator[Batch]:
    """Yield batches of complete lines from `start_offset` (ignored for .zst, always from 0)."""
    compressed = is_compressed(path)
    if compressed:
        start_offset = 0
    try:
        f = _open(path)
    except OSError as e:
        state.error = f"cannot open: {e.strerror or e}"
        state.end_offset = start_offset
        return
    offset = start_offset  # offset of the first byte of `tail`
    tail = b""
    skipping = 0  # >0 while discarding an oversized line: bytes discarded so far
    try:
        if start_offset and not compressed:
            f.seek(start_offset)
        while True:
            try:
                data = f.read(chunk)
            except Exception as e:  # zstd errors are not OSError
                state.error = f"read failed after byte {offset + len(tail)}: {e}"
                break
            if not data:
                break
            if offset == 0 and not tail and not state.head:
                state.head = data[:HEAD_BYTES]
            if skipping:
                nl = data.find(b"\n")
                if nl < 0:
                    skipping += len(data)
                    continue
                skipping += nl
                offset += skipping + 1
                yield Batch(offset - skipping - 1, b"", skipping)
                skipping = 0
                data = data[nl + 1 :]
            buf = tail + data if tail else data
            cut = buf.rfind(b"\n")
            if cut < 0:
                tail = buf
            else:
                tail = buf[cut + 1 :]
                yield Batch(offset, buf[:cut])
                offset += cut + 1
            if len(tail) > max_line:
                skipping = len(tail)
                tail = b""
        if skipping:
            # an oversized line that never ended: it is still being written
            state.pending_bytes = skipping
        else:
            state.pending_bytes = len(tail)
        state.end_offset = offset
    finally:
        f.close()
