"""Messages between the processes of one worker: framed bytes, JSON events, descriptors.

Three kinds of link, each owned by one pair of processes:

* the **controller stream** (the worker's stdin/stdout): one JSON array
  ``[event, data]`` per line (:func:`emit`, :func:`events`);
* the **zygote socket** (worker <-> zygote, ``SOCK_SEQPACKET``): one small JSON
  array per packet, with the run's descriptors attached (:func:`send`,
  :func:`receive`);
* the **call channel** (judge <-> sample, a stream socket): length-prefixed
  frames (:class:`Frames`) whose size is bounded by the reader.
"""

import json
import os
import socket
import struct

__all__ = ["Frames", "compact", "emit", "events", "memfd", "read_fd", "receive", "send", "send_encoded"]

compact = json.JSONEncoder(separators=(",", ":")).encode  # made once: json.dumps with options makes one per call

_HEADER = struct.Struct(">I")
_CUT = int(socket.MSG_TRUNC | socket.MSG_CTRUNC)  # a plain int: an IntFlag makes every `flags & _CUT` a slow enum call


def emit(name, data, fd=1):
    """Write the event ``[name, data]`` as one line to ``fd``."""
    line = (json.dumps([name, data]) + "\n").encode()
    while line:
        line = line[os.write(fd, line) :]


def events(stream):
    """``(name, data)`` for each line of ``stream`` (a binary file), until end of input."""
    for line in stream:
        name, data = json.loads(line)
        yield name, data


def memfd(data, name="data"):
    """A memfd holding ``data`` (bytes), positioned at its start."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def read_fd(fd):
    """Everything in the file ``fd`` (a memfd) from its start; ``fd`` is closed.

    One read of the file's size (and one byte more, to see its end) does it:
    reading in megabyte chunks costs a megabyte buffer, mapped and unmapped,
    for every program, however small.
    """
    os.lseek(fd, 0, os.SEEK_SET)
    want = os.fstat(fd).st_size + 1
    chunks = []
    while True:
        chunk = os.read(fd, want)
        chunks.append(chunk)
        if len(chunk) < want:  # a short read of a memfd or a regular file: its end
            break
        want = 1 << 20  # it grew since fstat: read on to its end
    os.close(fd)
    return b"".join(chunks)


def send(sock, name, data, fds=()):
    """One packet ``[name, data]`` on a ``SOCK_SEQPACKET`` socket, with ``fds`` attached."""
    payload = json.dumps([name, data]).encode()
    if fds:
        socket.send_fds(sock, [payload], list(fds))
    else:
        sock.send(payload)


def send_encoded(sock, name, body, fds=()):
    """As :func:`send`, with ``data`` given as its JSON text already encoded (bytes)."""
    socket.send_fds(sock, [b'["' + name.encode() + b'",' + body + b"]"], list(fds))


def receive(sock, max_fds=8):
    """``(name, data, fds)`` of the next packet; ``EOFError`` when the peer is gone."""
    payload, fds, flags, _ = socket.recv_fds(sock, 1 << 16, max_fds)
    if not payload:
        for fd in fds:
            os.close(fd)
        raise EOFError("the other process closed its socket")
    if flags & _CUT:
        for fd in fds:
            os.close(fd)
        raise EOFError("a packet did not fit")
    name, data = json.loads(payload.decode())
    return name, data, fds


class Frames:
    """Length-prefixed frames on a connected stream descriptor, each at most ``limit`` bytes."""

    def __init__(self, fd, limit):
        self.fd, self.limit, self._pending = fd, limit, b""

    def send(self, payload):
        data = _HEADER.pack(len(payload)) + payload
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def _fill(self, size):
        """Read until at least ``size`` bytes are buffered."""
        while len(self._pending) < size:
            chunk = os.read(self.fd, max(size - len(self._pending), 1 << 16))
            if not chunk:
                raise EOFError("the other process closed the channel")
            self._pending += chunk

    def receive(self):
        """The next frame; ``EOFError`` at end of stream, ``OverflowError`` past the limit."""
        self._fill(4)
        (size,) = _HEADER.unpack_from(self._pending)
        if size > self.limit:
            raise OverflowError(f"a reply of {size} bytes (the limit is {self.limit})")
        self._fill(4 + size)
        frame, self._pending = self._pending[4 : 4 + size], self._pending[4 + size :]
        return frame
