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
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20
MAX_LINE = 16 << 20  # a longer line is skipped (a 50 MB tool output is not a rollout record)


def is_compressed(path: str | os.PathLike[str]) -> bool:
    return str(path).endswith(".zst")


@dataclass
class StreamState:
    """What the stream found besides lines; filled in as it goes."""

    end_offset: int = 0  # offset just past the last complete line (plain files)
    pending_bytes: int = 0  # size of an unterminated last line, 0 when none
    oversized: list[tuple[int, int]] = field(default_factory=list)  # (line_no, bytes)
    error: str | None = None  # a read or decompression error that stopped the stream


@dataclass
class Batch:
    first_line_no: int  # 1-based number of lines[0]
    start_offset: int  # byte offset of lines[0] (in the decompressed stream for .zst)
    lines: list[bytes]  # without their b"\n"; oversized lines appear as b""


def _open(path: Path) -> BinaryIO:
    f = open(path, "rb")  # noqa: SIM115 - closed by the caller's finally
    if not is_compressed(path):
        return f
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(f, closefd=True)  # type: ignore[return-value]


def iter_batches(
    path: Path,
    state: StreamState,
    start_offset: int = 0,
    start_line_no: int = 1,
    max_line: int = MAX_LINE,
    chunk: int = CHUNK,
) -> Iterator[Batch]:
    """Yield batches of complete lines from `start_offset` (ignored for .zst, always from 0)."""
    compressed = is_compressed(path)
    if compressed:
        start_offset, start_line_no = 0, 1
    try:
        f = _open(path)
    except OSError as e:
        state.error = f"cannot open: {e.strerror or e}"
        state.end_offset = start_offset
        return
    offset = start_offset  # offset of the first byte of `tail`
    line_no = start_line_no
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
            if skipping:
                nl = data.find(b"\n")
                if nl < 0:
                    skipping += len(data)
                    continue
                skipping += nl
                state.oversized.append((line_no, skipping))
                offset += skipping + 1
                yield Batch(line_no, offset - skipping - 1, [b""])
                line_no += 1
                skipping = 0
                data = data[nl + 1 :]
            buf = tail + data if tail else data
            cut = buf.rfind(b"\n")
            if cut < 0:
                tail = buf
            else:
                lines = buf[:cut].split(b"\n")
                tail = buf[cut + 1 :]
                yield Batch(line_no, offset, lines)
                line_no += len(lines)
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
