"""Fuzz targets: one function per entry point that takes bytes.

A target feeds its input to kafkafmt and returns normally when kafkafmt either accepts it or
raises a :class:`~kafkafmt.errors.KafkaFmtError` (the documented outcome for bad input).  Any
other exception is a crash: a bug to fix and then to keep as a regression input under
``tests/fuzz/regressions/``.  Targets run under tight decode limits, so each execution is fast
and bounded whatever the input.

Used by the coverage-guided fuzzer (``atheris_main.py``, ``make fuzz``), by the hypothesis
strategies (``test_fuzz_bounded.py``) and by the regression replay (``test_fuzz_regressions.py``).
"""
from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from kafkafmt.annotate import render
from kafkafmt.broker import fetch, validate_messages_and_assign_offsets
from kafkafmt.compression import decompress
from kafkafmt.constants import CompressionType
from kafkafmt.dump import dump_log, iter_file_batches
from kafkafmt.errors import KafkaFmtError
from kafkafmt.limits import decode_limits
from kafkafmt.log import Log, LogConfig, SimulatedClock, dump_index, dump_time_index
from kafkafmt.records import MemoryRecords
from kafkafmt.records.columnar import batches_table, records_table
from kafkafmt.spec import batch_to_json, build_record_set, load_spec

#: limits for fuzzing: small enough that no input costs more than a few milliseconds of decoding
FUZZ_LIMITS = {"max_decompressed_bytes": 1 << 20, "max_records_per_batch": 20_000}
#: small indexes (Kafka's default preallocates 10 MB per index) so each execution stays cheap
_FUZZ_LOG_CONFIG = LogConfig(segment_index_bytes=4096)
#: a valid one-segment log used where a target needs a log next to a fuzzed file
SEGMENT = "00000000000000000000"


def _records(data: bytes) -> None:
    """Shallow then deep reading of every magic: batch headers, CRC checks, every record."""
    recs = MemoryRecords(data)
    for b in recs.batches():
        (b.base_offset, b.last_offset, b.next_offset, b.count, b.max_timestamp, b.is_valid(), b.checksum, repr(b))
        with contextlib.suppress(KafkaFmtError):
            b.compression, b.timestamp_type
        with contextlib.suppress(KafkaFmtError):
            for r in b.records():
                (r.offset, r.timestamp, r.key_size, r.value_size, r.headers)
    recs.trailing
    with contextlib.suppress(KafkaFmtError):
        list(MemoryRecords(data, strict=True).records())


def _columnar(data: bytes) -> None:
    batches_table(data)
    records_table(data)


def _codec(codec: CompressionType) -> Callable[[bytes], None]:
    def target(data: bytes) -> None:
        magic = (0, 1, 2)[data[0] % 3] if data and codec != CompressionType.ZSTD else 2
        out = decompress(codec, data[1:], magic=magic, max_bytes=FUZZ_LIMITS["max_decompressed_bytes"])
        assert isinstance(out, bytes) and len(out) <= FUZZ_LIMITS["max_decompressed_bytes"]
    target.__name__ = f"codec_{codec.kafka_name}"
    return target


def _dump(data: bytes) -> None:
    res = dump_log(data, filename="x.log", deep=True, print_data=True)
    assert res.valid_bytes + res.trailing_bytes == len(data)
    with contextlib.suppress(KafkaFmtError):
        for b in iter_file_batches(data):
            batch_to_json(b, deep=True)


def _annotate(data: bytes) -> None:
    render(data)


def _build(data: bytes) -> None:
    build_record_set(load_spec(data))


def _explain(data: bytes) -> None:
    with contextlib.suppress(KafkaFmtError):
        validate_messages_and_assign_offsets(data, offset=5, now=1_700_000_000_000)
    for magic in (0, 1, 2):
        with contextlib.suppress(KafkaFmtError):
            fetch(data, client_max_magic=magic)


@contextlib.contextmanager
def _scratch_dir():
    d = Path(tempfile.mkdtemp(prefix="kafkafmt-fuzz-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _index(data: bytes) -> None:
    """An index file of fuzzed bytes next to a valid segment: kafka-dump-log's index dump and verify."""
    from seeds import segment_bytes  # a valid .log to check the index against
    with _scratch_dir() as d:
        (d / f"{SEGMENT}.log").write_bytes(segment_bytes())
        timeindex = bool(data) and data[0] & 1
        path = d / f"{SEGMENT}.{'timeindex' if timeindex else 'index'}"
        path.write_bytes(data[1:])
        fn = dump_time_index if timeindex else dump_index
        for kw in ({}, {"verify_only": True}, {"sanity_check_only": True}):
            with contextlib.suppress(KafkaFmtError):
                fn(path, **kw)


def _recovery(data: bytes) -> None:
    """A segment of fuzzed bytes in a partition directory: load, recover, read, look up, reopen."""
    with _scratch_dir() as d:
        part = d / "t-0"
        part.mkdir()
        (part / f"{SEGMENT}.log").write_bytes(data)
        clock = SimulatedClock(1_700_000_000_000)
        with contextlib.suppress(KafkaFmtError):
            log = Log.open(part, _FUZZ_LOG_CONFIG, clock, clean_shutdown=False)
            try:
                log.read(log.log_start_offset, 1 << 20, isolation="log_end")
                log.fetch_offset_by_timestamp(0)
                log.fetch_offset_by_timestamp(-1)
            finally:
                log.close()
            Log.open(part, _FUZZ_LOG_CONFIG, clock).close()


TARGETS: dict[str, Callable[[bytes], None]] = {
    "records": _records,
    "columnar": _columnar,
    **{f"codec_{c.kafka_name}": _codec(c) for c in CompressionType if c != CompressionType.NONE},
    "index": _index,
    "recovery": _recovery,
    "dump": _dump,
    "annotate": _annotate,
    "build": _build,
    "explain": _explain,
}


#: targets with a known open crash that another change owns: {target: why}.  Such a target is fuzzed on
#: demand (``atheris_main.py TARGET``) but left out of ``all`` and of the bounded run, and its crash
#: inputs under ``regressions/TARGET/`` are expected to crash (strictly) until it is fixed.  Empty now:
#: ``columnar`` (non-UTF-8 header keys, offsets past 2^63; issue 12 item 5) was fixed on main.
KNOWN_OPEN: dict[str, str] = {}


def run_target(name: str, data: bytes) -> None:
    """Run one target on ``data`` under the fuzzing limits; a KafkaFmtError is a correct outcome."""
    with decode_limits(**FUZZ_LIMITS), contextlib.redirect_stdout(io.StringIO()):
        try:
            TARGETS[name](data)
        except KafkaFmtError as e:
            assert isinstance(e.reason, str) and str(e)


__all__ = ["TARGETS", "FUZZ_LIMITS", "KNOWN_OPEN", "run_target"]
