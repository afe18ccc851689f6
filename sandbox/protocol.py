"""Frames between the parent and a confined process: length-prefixed, request ids, size caps.

A frame is a 12-byte header (request id, JSON length, blob length; big-endian u32 each), a JSON
object, then an optional raw blob (a database snapshot rides there instead of as base64 text).
Never pickle: the parent must not deserialize objects chosen by untrusted code.

Parent side; nothing that comes back is trusted::

    channel = Channel(proc.stdin, proc.stdout.fileno(), max_bytes=64 << 20)
    message, blob = channel.request({"op": "..."}, timeout=5.0)    # blob: bytes or None
    # or, to overlap work: rid = channel.send(message); ...; channel.receive(rid, timeout)

    raises WorkerTimeout  no complete reply in time
           WorkerGone     the worker closed its end (it died)
           ProtocolError  a malformed header or body, a body that is not a JSON object, a reply
                          to another request (wrong id), an extra frame after the reply, a frame
                          over max_bytes (refused from its header, before it is read)
    all ChannelError. After any of them the caller must kill that process: its stream cannot
    be trusted to line up with requests any more.

Request ids are random, so a frame written ahead of time cannot pass for the reply to a later
request. Worker side::

    request = read_request(stream)             # (id, message, blob), None at end of input
    write_reply(stream, request_id, message, blob=None)
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import secrets
import select
import struct
import termios
import time

HEADER = struct.Struct(">III")
DEFAULT_MAX_BYTES = 64 << 20


class ChannelError(RuntimeError):
    """The worker cannot be talked to any more; kill it."""


class WorkerTimeout(ChannelError):
    pass


class WorkerGone(ChannelError):
    pass


class ProtocolError(ChannelError):
    pass


def encode(request_id: int, message: dict | bytes, blob: bytes | None = None) -> bytes:
    """A frame; `message` may be its JSON body already encoded (the worker's results are, once)."""
    body = message if isinstance(message, bytes) else json.dumps(message, default=str).encode()
    blob = blob or b""
    return HEADER.pack(request_id, len(body), len(blob)) + body + blob


class Channel:
    """The parent's end of one worker's stdin/stdout."""

    def __init__(self, writer, read_fd: int, max_bytes: int = DEFAULT_MAX_BYTES):
        self.writer, self.read_fd, self.max_bytes = writer, read_fd, max_bytes
        self._poller = None

    def send(self, message: dict, blob: bytes | None = None) -> int:
        request_id = secrets.randbits(32)
        try:
            self.writer.write(encode(request_id, message, blob))
            self.writer.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise WorkerGone(f"the worker is gone: {error}") from None
        return request_id

    def receive(self, request_id: int, timeout: float) -> tuple[dict, bytes | None]:
        deadline = time.monotonic() + timeout
        data = self._read(HEADER.size, deadline, more=True)  # a small reply comes whole in this one read
        rid, size, blob_size = HEADER.unpack_from(data)
        if rid != request_id:
            raise ProtocolError(f"a frame for request {rid:#x} answered request {request_id:#x}")
        if size + blob_size > self.max_bytes:
            raise ProtocolError(f"a {size + blob_size}-byte frame is over the {self.max_bytes}-byte cap")
        end = HEADER.size + size + blob_size
        if len(data) > end:
            raise ProtocolError("an extra frame after the reply")
        if len(data) < end:
            data += self._read(end - len(data), deadline)
        body = data[HEADER.size:HEADER.size + size]
        blob = data[HEADER.size + size:] if blob_size else None
        try:
            message = json.loads(body)
        except (ValueError, RecursionError) as error:
            raise ProtocolError(f"a malformed frame: {type(error).__name__}") from None
        if not isinstance(message, dict):
            raise ProtocolError(f"a frame holding {type(message).__name__}, not an object")
        if _bytes_waiting(self.read_fd):
            raise ProtocolError("an extra frame after the reply")
        return message, blob

    def request(self, message: dict, timeout: float, blob: bytes | None = None) -> tuple[dict, bytes | None]:
        return self.receive(self.send(message, blob), timeout)

    def _read(self, size: int, deadline: float, more: bool = False) -> bytes:
        """`size` bytes; with `more`, at least `size` and whatever else the first reads bring (64 KiB at most)."""
        if self._poller is None:
            self._poller = select.poll()
            self._poller.register(self.read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        chunks: list[bytes] = []
        want = max(size, 1 << 16) if more else size
        while size > 0:
            wait_ms = math.ceil((deadline - time.monotonic()) * 1000)
            if wait_ms <= 0 or not self._poller.poll(wait_ms):
                raise WorkerTimeout("no answer in time")
            chunk = os.read(self.read_fd, min(want, 1 << 20))
            if not chunk:
                raise WorkerGone("the worker closed its end")
            chunks.append(chunk)
            size -= len(chunk)
            want -= len(chunk)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _bytes_waiting(fd: int) -> int:
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, "little")


def read_request(stream) -> tuple[int, dict, bytes | None] | None:
    """The next request from the parent (trusted), None when it closed the pipe."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    request_id, size, blob_size = HEADER.unpack(header)
    message = json.loads(stream.read(size))
    return request_id, message, stream.read(blob_size) if blob_size else None


def write_reply(stream, request_id: int, message: dict | bytes, blob: bytes | None = None) -> None:
    stream.write(encode(request_id, message, blob))
    stream.flush()
