"""The compiled lz4 frame decoder (kafkafmt.records.fast.lz4_frame) against the reference decoder.

Frames as Kafka writes them (kafkafmt's writer is checked byte for byte against kafka-clients 3.9.2 in
tests/compression/test_compression.py, and two of Kafka's own streams are decoded here) decode to the
same bytes; damaged frames are either handed back (-1) or decoded exactly as the reference decodes
them, never differently: the kernel may be stricter than liblz4, never looser.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from numba import njit

from kafkafmt.compression import lz4 as kafka_lz4
from kafkafmt.errors import KafkaFmtError
from kafkafmt.records.fast.lz4_frame import lz4_frame_into

# written by kafka-clients 3.9.2 (Lz4BlockOutputStream, magic 2): "hello kafka " ten times, and nothing
KAFKA_FRAMES = [("04224d1860408216000000cf68656c6c6f206b61666b61200c00545061666b612000000000", b"hello kafka " * 10),
                ("04224d1860408200000000", b"")]


@njit
def _decode(frame, room):
    out = np.empty(room, np.uint8)
    n = lz4_frame_into(frame, 0, frame.shape[0], out, room)
    return out[:max(n, 0)].copy(), n


def _kernel(frame: bytes, room: int = 1 << 20):
    out, n = _decode(np.frombuffer(frame, np.uint8), room)
    return None if n < 0 else out.tobytes()


def _reference(frame: bytes):
    try:
        return bytes(kafka_lz4.decompress(frame, 2, 1 << 20))
    except KafkaFmtError:
        return None


@pytest.mark.parametrize("hexframe,data", KAFKA_FRAMES)
def test_kafkas_own_frames(hexframe, data):
    assert _kernel(bytes.fromhex(hexframe)) == data


def _payload(rng: random.Random) -> bytes:
    size = rng.choice([0, 1, 5, 13, 100, 4000, 65535, 65536, 65537, 200_000])
    kind = rng.randrange(3)
    if kind == 0:
        return rng.randbytes(size)
    if kind == 1:
        return bytes(rng.choice(b"abc ") for _ in range(size))
    return ((b"key-%d value " % rng.randrange(100)) * (size // 14 + 1))[:size]


def test_frames_kafka_writes_decode_to_their_input():
    rng = random.Random(11)
    for _ in range(120):
        data = _payload(rng)
        assert _kernel(kafka_lz4.compress(data, magic=2)) == data


def test_damaged_frames_are_handed_back_or_decoded_as_the_reference_does():
    rng = random.Random(12)
    decoded = 0
    for _ in range(2000):
        frame = bytearray(kafka_lz4.compress((b"key-%d value " % rng.randrange(100)) * rng.randrange(1, 400),
                                             magic=2))
        for _ in range(rng.randrange(1, 4)):
            frame[rng.randrange(len(frame))] = rng.randrange(256)
        got = _kernel(bytes(frame))
        if got is not None:
            decoded += 1
            assert got == _reference(bytes(frame))
    assert decoded > 100  # damage inside literals still decodes: the comparison above ran


def test_too_little_room_and_other_descriptors_are_handed_back():
    data = b"x" * 70_000
    frame = kafka_lz4.compress(data, magic=2)
    assert _kernel(frame, room=len(data) - 1) is None and _kernel(frame, room=len(data)) == data
    assert _kernel(kafka_lz4.compress(data, magic=0)) is None  # KAFKA-3160's header checksum: the reference decides
    assert _kernel(kafka_lz4.compress(data, magic=2)[:-4]) is None  # no end mark


def test_the_stand_in_block_decoder_is_never_looser_than_liblz4():
    """Where liblz4 cannot be linked, _block_into decodes: each block as lz4.block.decompress does, or -1."""
    import lz4.block

    from kafkafmt.records.fast.lz4_frame import _block_into

    @njit
    def block(src, room):
        out = np.empty(room, np.uint8)
        n = _block_into(src, 0, src.shape[0], out, 0, room)
        return out[:max(n, 0)].copy(), n

    rng = random.Random(13)
    agreed = 0
    for i in range(1500):
        data = _payload(rng)[:65536] if i % 3 else (b"key-%d value " % rng.randrange(100)) * rng.randrange(1, 400)
        packed = bytearray(lz4.block.compress(data, store_size=False))
        if i % 2 and packed:
            packed[rng.randrange(len(packed))] = rng.randrange(256)
        try:
            ref = lz4.block.decompress(bytes(packed), uncompressed_size=65536)
        except Exception:
            ref = None
        out, n = block(np.frombuffer(bytes(packed), np.uint8), 65536)
        if n >= 0:
            agreed += 1
            assert out.tobytes() == ref
    assert agreed > 700
