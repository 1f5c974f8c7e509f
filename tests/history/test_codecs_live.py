"""Compressed produce stored byte for byte as 0.9.0.1 … 2.1.1 store it (rows ``codec.*`` and
``produce.legacy_inner_offsets_base``), on the real brokers.

kafka-python's own message sets (gzip, snappy, lz4; magic 0 for a 0.9 broker, 1 after) are produced to a topic of
the producer's codec and to topics whose ``compression.type`` differs (:mod:`kafkarig.codecs_live`); the bytes each
release's leader appended are compared whole with ``validate_messages_and_assign_offsets`` configured as that
release's line, and from 0.10.0 on the partition fetched as message format v0 (Fetch v1: down-converted by the
release, by :func:`kafkafmt.broker.fetch.fetch` of its line). The leaders of 0.9.0.1, 0.10.0.1 and 0.10.1.1 rebuild
kafka-python's sets (0.9: offsets to assign; 0.10.0 and 0.10.1: its wrapper offset 0 reads its inner offsets as
negative), 0.10.2.2 keeps them in place, and 2.0.1 and 2.1.1 convert them to v2: the lz4 blocks stored are those of
each release's lz4-java (liblz4 r100, r123, r123 and 1.8.3), which :func:`test_the_lz4_of_each_release_shows`
proves the payloads tell apart. One broker per release, one after the other (about 2.5 min here).
"""
from __future__ import annotations

import pytest

from kafkafmt.compression import compress, decompress
from kafkafmt.constants import RECORD_BATCH_OVERHEAD, CompressionType
from kafkafmt.records import MemoryRecords
from old_release_fixtures import rig_job, rig_result

pytestmark = [pytest.mark.java, pytest.mark.broker]

from kafkarig.codecs_live import RELEASES, check_names  # noqa: E402
from kafkarig.releases import release  # noqa: E402

rig_job("codecs-rig", module=__name__, fixture="checks", target="kafkarig.codecs_live:run_all", releases=RELEASES,
        timeout=900)


@pytest.fixture(scope="module")
def checks():
    run = rig_result("codecs-rig", RELEASES)
    return {(c["release"], c["check"]): c for c in run["checks"]}


@pytest.mark.parametrize("version,name", [(v, n) for v in RELEASES for n in check_names(release(v))])
def test_the_release_stores_what_the_model_predicts(checks, version, name):
    c = checks[(version, name)]
    assert c["error_code"] == 0 and c["agree"], f"{c['path']}: {c['detail']}"


def _lz4_payloads(stored: bytes) -> list[tuple[int, bytes]]:
    """(magic, compressed payload) of each lz4 batch or wrapper in ``stored``."""
    out = []
    for b in MemoryRecords(stored).batches():
        if b.compression_id != CompressionType.LZ4:
            continue
        payload = bytes(b.message.value) if b.magic < 2 else bytes(stored[b.position + RECORD_BATCH_OVERHEAD:b.end])
        out.append((b.magic, payload))
    return out


def _differs_from_liblz4_1_10(c) -> bool:
    """Whether an lz4 payload the release stored is not what liblz4 1.10 (the 3.9 line's) writes for it."""
    return any(compress(CompressionType.LZ4, decompress(CompressionType.LZ4, p, magic=m), magic=m, line="3.9") != p
               for m, p in _lz4_payloads(bytes.fromhex(c["real"])))


def test_the_lz4_of_each_release_shows(checks):
    """Kept honest: the lz4 sets releases before 2.1 rebuilt hold blocks that today's liblz4 would not write (so a
    model compressing with it fails above); 2.1.1's (liblz4 1.8.3) none."""
    for v in RELEASES:
        rebuilt = [n for n in check_names(release(v)) if "lz4" in n and "rebuilt" in checks[(v, n)]["path"]]
        differ = [n for n in rebuilt if _differs_from_liblz4_1_10(checks[(v, n)])]
        assert bool(differ) == (v != "2.1.1"), (v, differ)
