"""Kafka's configuration files, written from a dict: the one writer every broker launcher uses.

A launcher (ZooKeeper mode, KRaft mode, an old release) builds its broker's settings as a dict of
strings and calls :func:`write_server_properties`; ``zoo.cfg`` is the same ``key=value`` format.
"""
from __future__ import annotations

from pathlib import Path


def write_properties(path: Path, props: dict[str, str]) -> Path:
    """``props`` as ``key=value`` lines (``java.util.Properties``' format; keys and values here need no
    escaping: names, numbers, host:port lists and paths), in the dict's order."""
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()), encoding="utf-8")
    return path


def write_server_properties(directory: Path, props: dict[str, str]) -> Path:
    """A broker's ``server.properties`` in ``directory`` (what ``kafka.Kafka`` and the storage tool read)."""
    return write_properties(directory / "server.properties", props)
