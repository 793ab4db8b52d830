"""Stream the whole lines of a rollout file in batches, never holding a large file in memory.

Both the fast index scanner and the full transcript reader sit on this. It knows the three
things about bytes on disk that the rest of memdeck should not have to:

* `.jsonl.zst` files are decompressed on the fly (Codex compresses cold rollouts in place);
* a last line without its newline is *pending* (Codex may still be writing it): it is not
  consumed, so the next incremental read starts at its first byte;
* a line longer than `max_line` is skipped without being held, and reported.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Protocol

CHUNK = 1 << 20
MAX_LINE = 16 << 20  # a longer line is skipped (a 50 MB tool output is not a rollout record)


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return str(path).endswith(".zst")


# -- opening only regular files ----------------------------------------------------------------
# A FIFO, socket or device named like a rollout (or config.toml) would block `open()` or
# `read()` forever, and opening a device can have side effects: memdeck never opens one.

NOT_REGULAR = "not a regular file"  # how every such finding starts (file problems, errors)
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISDIR, "a folder"))


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO", "a socket", …)."""
    return next((word for test, word in _KINDS if test(mode)), "a special file")


class NotRegularFile(OSError):
    """`path` (or what its symlink points to) is a FIFO, socket, device or folder."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(0, f"{NOT_REGULAR} ({kind})", os.fspath(path))
        self.kind = kind


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor on `path` if it is a regular file (a symlink to one is followed:
    Codex follows it too), else `NotRegularFile`; other failures are the usual OSError.

    `stat` first, so a FIFO or device is never opened at all; the open is O_NONBLOCK, so a
    file swapped for a FIFO between the two calls cannot block it, and `fstat` on the
    descriptor then proves what was opened. O_NONBLOCK is cleared again for the reads."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path, file_kind(st.st_mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path, file_kind(st.st_mode))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular_file(path: str | os.PathLike[str]) -> BinaryIO:
    """`open(path, "rb")` for a regular file only (`open_regular`)."""
    return os.fdopen(open_regular(path), "rb")


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """`Path.read_bytes()` for a regular file only (`open_regular`)."""
    with open_regular_file(path) as f:
        return f.read()


def not_regular_problem(e: NotRegularFile) -> str:
    """A rollout's file problem for it: the row says what it is and that it was skipped."""
    return f"{e.strerror}: skipped, never opened"


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
        self._fd = open_regular(path)

    def read(self, n: int) -> bytes:
        return os.read(self._fd, n)

    def seek(self, offset: int) -> None:
        os.lseek(self._fd, offset, os.SEEK_SET)

    def close(self) -> None:
        os.close(self._fd)


def _open(path: str | os.PathLike[str]) -> _Reader:
    if not is_compressed(path):
        return _RawReader(path)
    return _ZstdReader(open_regular_file(path))


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
    except NotRegularFile as e:
        state.error = not_regular_problem(e)
        state.end_offset = start_offset
        return
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
