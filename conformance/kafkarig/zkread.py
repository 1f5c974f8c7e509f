"""One znode read from ZooKeeper over its own wire protocol (jute), for the state no broker shows in time.

A ZooKeeper-mode broker's metadata lags ZooKeeper for the ISR: a leader that takes a restarted follower back
writes the partition's new ISR to ``/brokers/topics/<t>/partitions/<p>/state`` at once, but the brokers'
metadata caches (what a Metadata request answers) learn it only when the leader propagates its ISR changes,
after 5 s without a change (``ReplicaManager.IsrChangePropagationBlackOut``, 0.9 to 2.x).  The controller
and the preferred leader election read ZooKeeper: so does :func:`partition_state`.

:func:`get_data` speaks ZooKeeper's client protocol (``org.apache.zookeeper.proto``): a session opened with a
``ConnectRequest``, one ``GetDataRequest`` (op 4) without watch, the session closed (op -11); every release's
server (3.4.x, 3.5.x) answers it.
"""
from __future__ import annotations

import json
import socket
import struct

__all__ = ["ZkError", "get_data", "partition_state", "replica_assignment"]

_GET_DATA, _CLOSE_SESSION = 4, -11
_NO_NODE = -101


class ZkError(OSError):
    """ZooKeeper answered a request with an error code, or not as its protocol says."""


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _read_frame(sock: socket.socket) -> bytes:
    head = _read(sock, 4)
    return _read(sock, struct.unpack(">i", head)[0])


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ZkError("ZooKeeper closed the connection")
        buf += chunk
    return buf


def get_data(host: str, port: int, path: str, timeout: float = 5.0) -> bytes | None:
    """The data of znode ``path`` (absolute, chroot included), or None when it does not exist."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        # ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 bytes)
        sock.sendall(_frame(struct.pack(">iqiqi", 0, 0, int(timeout * 1000), 0, 16) + bytes(16)))
        _read_frame(sock)  # ConnectResponse: the session
        p = path.encode()
        sock.sendall(_frame(struct.pack(">ii", 1, _GET_DATA) + struct.pack(">i", len(p)) + p + b"\0"))
        reply = _read_frame(sock)
        xid, _zxid, err = struct.unpack(">iqi", reply[:16])
        sock.sendall(_frame(struct.pack(">ii", 2, _CLOSE_SESSION)))
        if xid != 1:
            raise ZkError(f"ZooKeeper answered xid {xid} to getData {path}")
        if err == _NO_NODE:
            return None
        if err != 0:
            raise ZkError(f"ZooKeeper getData {path}: error {err}")
        (n,) = struct.unpack(">i", reply[16:20])
        return reply[20:20 + n] if n >= 0 else b""


def partition_state(connect: str, topic: str, partition: int) -> dict | None:
    """``{"leader", "isr", ...}`` of ``topic``'s ``partition`` as ZooKeeper holds it (``connect``:
    ``host:port/chroot``, as a broker's ``zookeeper.connect``), or None before the controller wrote it."""
    return _json_at(connect, f"/brokers/topics/{topic}/partitions/{partition}/state")


def replica_assignment(connect: str, topic: str) -> dict[int, list[int]] | None:
    """``{partition: [broker ids]}``: ``topic``'s replicas as ZooKeeper assigns them (``/brokers/topics/<t>``,
    written when the topic is created), or None before it exists.  A 0.9 ... 2.x broker's Metadata response lists
    only the replicas it knows alive (``MetadataCache``): right after a broker restarts, its own partitions show
    one replica fewer there, never here."""
    data = _json_at(connect, f"/brokers/topics/{topic}")
    return None if data is None else {int(k): list(v) for k, v in data["partitions"].items()}


def _json_at(connect: str, path: str):
    """The JSON znode ``path`` under ``connect``'s chroot (``host:port/chroot``, as a broker's ``zookeeper.connect``),
    or None when it does not exist."""
    hostport, _, chroot = connect.partition("/")
    host, port = hostport.rsplit(":", 1)
    data = get_data(host, int(port), f"/{chroot}{path}" if chroot else path)
    return None if data is None else json.loads(data)
