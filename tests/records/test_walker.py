"""The one batch walker (kafkafmt.records.walker) and the header constants it stands on.

* every header constant of ``constants.py`` is derived from ``layout.py`` (no literal), and every
  layout offset, length and constant equals Apache Kafka 3.9's own (read from its classes by the
  oracle);
* the walker's rule table (MEMORY / FILE / INNER), its lenient, strict and need-more modes over
  every split point of a mixed-magic sample, byte ranges, read-only mmap;
* where Kafka's ``MemoryRecords`` stops on every prefix of the sample, the walker stops too;
* no other module of the package reads the log-entry framing or parses legacy messages itself.
"""
from __future__ import annotations

import ast
import mmap
import os
import re
from pathlib import Path

import pytest

import kafkafmt
from kafkafmt import constants as C
from kafkafmt.constants import CompressionType, TimestampType
from kafkafmt.dump import iter_file_batches
from kafkafmt.errors import CorruptRecordError, KafkaStorageError, TruncatedRecordError
from kafkafmt.layout import DEFAULT_BATCH, DEFAULT_BATCH_CRC_START, LEGACY_V0, LEGACY_V1, LEGACY_VALUE_LENGTH, LOG_ENTRY
from kafkafmt.records import Header, MemoryRecords, build_records, read_batch
from kafkafmt.records.memory import span_batch
from kafkafmt.records.walker import (
    FILE,
    INNER,
    MEMORY,
    RULES,
    BatchSpan,
    BatchWalker,
    NeedMore,
    PreadSource,
    Trailing,
    next_span,
    span_at,
)

PACKAGE = Path(kafkafmt.__file__).parent


def _sample() -> list[bytes]:
    """One entry or batch of each kind: v0, v1 gzip wrapper, v2 with headers, v2 lz4 transactional."""
    return [
        build_records([(-1, b"k0", b"v0")], magic=0),
        build_records([(10, b"a", b"1"), (11, None, b"2")], magic=1, compression=CompressionType.GZIP,
                      base_offset=1),
        build_records([(20, b"k", b"v", [Header("h", b"x")]), (21, None, None)], base_offset=3),
        build_records([(30, b"x" * 5, b"y" * 7)] * 3, compression=CompressionType.LZ4, base_offset=5,
                      producer_id=7, producer_epoch=1, base_sequence=0, is_transactional=True),
    ]


PARTS = _sample()
DATA = b"".join(PARTS)
STARTS = [sum(len(p) for p in PARTS[:i]) for i in range(len(PARTS))]
EXPECTED = [(pos, len(p), (0, 1, 2, 2)[i], LOG_ENTRY.get(p, 0, "offset"))
            for i, (pos, p) in enumerate(zip(STARTS, PARTS))]


def _spans(walk) -> list[tuple]:
    return [(s.position, s.size, s.magic, s.offset) for s in walk]


# --------------------------------------------------------------------------------------------------
# header constants: derived from layout.py, equal to Kafka's
HEADER_CONSTANTS = ["OFFSET_OFFSET", "SIZE_OFFSET", "LOG_OVERHEAD", "MAGIC_OFFSET", "HEADER_SIZE_UP_TO_MAGIC",
                    "LEGACY_HEADER_SIZE_V0", "LEGACY_HEADER_SIZE_V1", "LEGACY_RECORD_OVERHEAD_V0",
                    "LEGACY_RECORD_OVERHEAD_V1", "RECORD_BATCH_OVERHEAD"]


def test_header_constants_are_derived_from_layouts_not_written():
    tree = ast.parse((PACKAGE / "constants.py").read_text())
    assigned = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name)}
    layouts = {"LOG_ENTRY", "DEFAULT_BATCH", "LEGACY_V0", "LEGACY_V1", "LEGACY_VALUE_LENGTH"}
    for name in HEADER_CONSTANTS:
        expr = assigned[name]
        literals = [n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, int)]
        assert literals == [], f"{name} is written as a number ({literals}); derive it from layout.py"
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        assert names & (layouts | set(HEADER_CONSTANTS)), f"{name} does not come from a layout"


def _framing(layout):
    return [(f.offset, f.type) for f in layout.fields[:2]]


def test_layouts_agree_where_formats_share_a_field():
    # the framing every magic shares: offset, size, then the magic byte at the same place
    for layout in (LEGACY_V0, LEGACY_V1, DEFAULT_BATCH):
        assert _framing(layout) == _framing(LOG_ENTRY)
        assert layout.offset_of("magic") == C.MAGIC_OFFSET
        assert layout.field("magic").size == C.HEADER_SIZE_UP_TO_MAGIC - C.MAGIC_OFFSET
    assert LOG_ENTRY.size == C.LOG_OVERHEAD
    assert DEFAULT_BATCH.size == C.RECORD_BATCH_OVERHEAD
    assert LEGACY_V0.size - C.LOG_OVERHEAD + LEGACY_VALUE_LENGTH.size == C.LEGACY_RECORD_OVERHEAD_V0
    assert LEGACY_V1.size - C.LOG_OVERHEAD + LEGACY_VALUE_LENGTH.size == C.LEGACY_RECORD_OVERHEAD_V1


_KAFKA_CONSTANTS = {
    "OFFSET_OFFSET": "Records.OFFSET_OFFSET", "SIZE_OFFSET": "Records.SIZE_OFFSET",
    "LOG_OVERHEAD": "Records.LOG_OVERHEAD", "MAGIC_OFFSET": "Records.MAGIC_OFFSET",
    "HEADER_SIZE_UP_TO_MAGIC": "Records.HEADER_SIZE_UP_TO_MAGIC",
    "LEGACY_HEADER_SIZE_V0": "LegacyRecord.HEADER_SIZE_V0", "LEGACY_HEADER_SIZE_V1": "LegacyRecord.HEADER_SIZE_V1",
    "LEGACY_RECORD_OVERHEAD_V0": "LegacyRecord.RECORD_OVERHEAD_V0",
    "LEGACY_RECORD_OVERHEAD_V1": "LegacyRecord.RECORD_OVERHEAD_V1",
    "LEGACY_COMPRESSION_CODEC_MASK": "LegacyRecord.COMPRESSION_CODEC_MASK",
    "LEGACY_TIMESTAMP_TYPE_MASK": "LegacyRecord.TIMESTAMP_TYPE_MASK",
    "RECORD_BATCH_OVERHEAD": "DefaultRecordBatch.RECORD_BATCH_OVERHEAD",
    "V2_COMPRESSION_CODEC_MASK": "DefaultRecordBatch.COMPRESSION_CODEC_MASK",
    "V2_TIMESTAMP_TYPE_MASK": "DefaultRecordBatch.TIMESTAMP_TYPE_MASK",
    "V2_TRANSACTIONAL_FLAG_MASK": "DefaultRecordBatch.TRANSACTIONAL_FLAG_MASK",
    "V2_CONTROL_FLAG_MASK": "DefaultRecordBatch.CONTROL_FLAG_MASK",
    "V2_DELETE_HORIZON_FLAG_MASK": "DefaultRecordBatch.DELETE_HORIZON_FLAG_MASK",
    "DEFAULT_RECORD_MAX_OVERHEAD": "DefaultRecord.MAX_RECORD_OVERHEAD",
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


@pytest.mark.java
def test_every_header_constant_and_layout_offset_is_kafkas(kafka_oracle):
    classes = [f"org.apache.kafka.common.record.{c}" for c in
               ("Records", "LegacyRecord", "DefaultRecordBatch", "DefaultRecord")]
    kafka = kafka_oracle.call("constants", classes=classes)["constants"]
    ours = {name: getattr(C, name) for name in _KAFKA_CONSTANTS}
    assert ours == {name: kafka[k] for name, k in _KAFKA_CONSTANTS.items()}
    # v2 batch header: every field's offset and length as DefaultRecordBatch defines them
    for f in DEFAULT_BATCH.fields:
        key = _snake(f.name)
        length = "ATTRIBUTE_LENGTH" if key == "ATTRIBUTES" else f"{key}_LENGTH"  # (sic) in Kafka
        assert (f.offset, f.size) == (kafka[f"DefaultRecordBatch.{key}_OFFSET"], kafka[f"DefaultRecordBatch.{length}"])
    assert DEFAULT_BATCH.size == kafka["DefaultRecordBatch.RECORDS_OFFSET"]
    assert DEFAULT_BATCH_CRC_START == kafka["DefaultRecordBatch.ATTRIBUTES_OFFSET"]
    # log entry framing (Records) and the legacy message (LegacyRecord offsets count from the crc)
    for f in LOG_ENTRY.fields:
        key = f"Records.{f.name.upper()}"
        assert (f.offset, f.size) == (kafka[f"{key}_OFFSET"], kafka[f"{key}_LENGTH"])
    overhead = kafka["Records.LOG_OVERHEAD"]
    for magic, layout in ((0, LEGACY_V0), (1, LEGACY_V1)):
        assert _framing(layout) == _framing(LOG_ENTRY)
        for f in layout.fields[2:]:
            key = f"KEY_SIZE_OFFSET_V{magic}" if f.name == "keyLength" else f"{f.name.upper()}_OFFSET"
            length = "KEY_SIZE_LENGTH" if f.name == "keyLength" else f"{f.name.upper()}_LENGTH"
            assert (f.offset, f.size) == (overhead + kafka[f"LegacyRecord.{key}"], kafka[f"LegacyRecord.{length}"])
    assert LEGACY_VALUE_LENGTH.size == kafka["LegacyRecord.VALUE_SIZE_LENGTH"]


# --------------------------------------------------------------------------------------------------
# the walker over whole input, byte ranges, buffer kinds
def test_walker_finds_every_batch_and_reads_headers_through_the_layouts():
    walk = BatchWalker(DATA)
    spans = list(walk)
    assert _spans(spans) == EXPECTED and walk.stop is None and walk.valid_bytes == len(DATA)
    for span in spans:
        batch = read_batch(DATA, span.position)
        head = span.header(DATA)
        assert (head["offset" if span.is_legacy else "baseOffset"], head["magic"]) == (span.offset, batch.magic)
        if not span.is_legacy:
            assert (head["recordsCount"], head["producerId"], head["crc"]) == \
                   (batch.count, batch.producer_id, batch.checksum)
        else:
            assert (head["crc"], head["attributes"] & 0xFF) == (batch.checksum, batch.attributes)


def test_byte_range_and_buffer_kinds(tmp_path):
    assert _spans(BatchWalker(DATA, STARTS[1], STARTS[3])) == EXPECTED[1:3]
    assert _spans(BatchWalker(memoryview(DATA))) == EXPECTED
    assert _spans(BatchWalker(bytearray(DATA), rules=FILE)) == EXPECTED
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(DATA)
    with open(path, "rb") as fh:
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        assert _spans(BatchWalker(mm)) == EXPECTED
        assert [s.header(mm)["magic"] for s in BatchWalker(mm)] == [0, 1, 2, 2]
        mm.close()  # the walker holds no view of the map: closing cannot raise BufferError


def test_a_file_source_walks_as_the_buffer_does(tmp_path):
    """The same walker over a ``pread`` source (a read-only descriptor): the same spans, stops and
    errors as over the file's bytes in memory; a file shorter than ``end`` fails as readFullyOrFail."""
    path = tmp_path / "00000000000000000000.log"
    for data in (DATA, DATA[:-5], DATA[:STARTS[3] + 10], bytes(_with(0, size=3))):
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            for rules in (FILE, MEMORY):
                from_file = BatchWalker(PreadSource(fd), 0, len(data), rules=rules)
                in_memory = BatchWalker(data, rules=rules)
                try:
                    expected = _spans(in_memory), in_memory.stop
                except CorruptRecordError as e:
                    with pytest.raises(CorruptRecordError) as mine:
                        list(from_file)
                    assert (mine.value.position, mine.value.reason) == (e.position, e.reason)
                    continue
                assert (_spans(from_file), from_file.stop) == expected
            if data is DATA:
                with pytest.raises(KafkaStorageError, match=f"after reading 0 bytes. Started read from position {len(DATA)}."):
                    list(BatchWalker(PreadSource(fd), 0, len(data) + 100, rules=FILE))
        finally:
            os.close(fd)
    with pytest.raises(TypeError):
        BatchWalker(PreadSource(0))


def test_one_step_from_a_pread_style_header():
    """``next_span`` needs only the 17 header bytes at ``position`` (``base`` = their stream position)."""
    pos = STARTS[2]
    head = DATA[pos:pos + C.HEADER_SIZE_UP_TO_MAGIC]
    assert next_span(head, pos, len(DATA), FILE, base=pos) == BatchSpan(*EXPECTED[2])
    assert span_at(DATA, STARTS[3]).end == len(DATA)
    with pytest.raises(TruncatedRecordError):
        span_at(DATA[:-1], STARTS[3])


# --------------------------------------------------------------------------------------------------
# every split point: lenient, strict and need-more agree on where the walk stops and why
def _cut_state(k: int):
    whole = [e for e in EXPECTED if e[0] + e[1] <= k]
    nxt = STARTS[len(whole)] if len(whole) < len(EXPECTED) else len(DATA)
    return whole, nxt


@pytest.mark.parametrize("k", range(len(DATA) + 1))
def test_every_split_point(k):
    cut = DATA[:k]
    whole, nxt = _cut_state(k)
    have = k - nxt
    lenient, need = BatchWalker(cut), BatchWalker(cut, need_more=True)
    assert _spans(lenient) == _spans(need) == whole
    if have == 0:
        assert lenient.stop is None and need.stop is None
        return
    size = EXPECTED[len(whole)][1]
    # need-more: 12 bytes to learn the size, then exactly the rest of the batch
    assert need.stop == NeedMore(nxt, C.LOG_OVERHEAD - have if have < C.LOG_OVERHEAD else size - have)
    fed = BatchWalker(DATA[:k + need.stop.needed], nxt, need_more=True)
    first = next(iter(fed)) if have >= C.LOG_OVERHEAD else None
    if have >= C.LOG_OVERHEAD:
        assert (first.position, first.size) == (nxt, size)
    else:
        assert list(fed) == [] and fed.stop == NeedMore(nxt, size - C.LOG_OVERHEAD)
    # lenient: the trailing bytes, with the reason ByteBufferLogInputStream stops
    reason = (f"{have} bytes, fewer than the 12-byte offset/size header" if have < C.LOG_OVERHEAD else
              "the batch is cut before its magic byte" if have < C.HEADER_SIZE_UP_TO_MAGIC else
              f"a batch declares {size} bytes but only {have} remain")
    assert lenient.stop == Trailing(nxt, have, reason)
    recs = MemoryRecords(cut)
    assert (recs.trailing, recs.valid_bytes) == (lenient.stop, nxt)
    with pytest.raises(TruncatedRecordError) as e:
        list(BatchWalker(cut, strict=True))
    assert (e.value.position, e.value.reason) == (nxt, f"truncated input: {reason}")
    # FileLogInputStream: the same whole batches (dump and FileRecords read through these rules); it
    # reads on only while more than 17 bytes remain
    assert _spans(BatchWalker(cut, rules=FILE)) == whole
    file_need = BatchWalker(cut, rules=FILE, need_more=True)
    assert _spans(file_need) == whole
    assert file_need.stop == NeedMore(nxt, FILE.header - have if have < FILE.header else size - have)
    assert [b.position for b in iter_file_batches(cut)] == [w[0] for w in whole]


@pytest.mark.java
def test_kafka_stops_where_the_walker_stops_on_every_prefix(kafka_oracle):
    for k in range(len(DATA) + 1):
        resp = kafka_oracle.call("read", bytes=DATA[:k])
        walk = BatchWalker(DATA[:k])
        assert [b["sizeInBytes"] for b in resp["batches"]] == [s.size for s in walk], k
        assert resp["validBytes"] == walk.valid_bytes, k


# --------------------------------------------------------------------------------------------------
# the rule table
def _with(pos: int, *, size: int | None = None, magic: int | None = None) -> bytearray:
    buf = bytearray(DATA)
    if size is not None:
        LOG_ENTRY.put(buf, pos, "size", size)
    if magic is not None:
        buf[pos + C.MAGIC_OFFSET] = magic & 0xFF
    return buf


def test_rule_table_names_the_kafka_class_of_each_row():
    assert RULES == {"memory": MEMORY, "file": FILE, "inner": INNER}
    assert [r.source for r in RULES.values()] == ["ByteBufferLogInputStream.nextBatch",
                                                  "FileLogInputStream.nextBatch", "DataLogInputStream.nextBatch"]


@pytest.mark.parametrize("rules, message", [
    (MEMORY, "Record size 13 is less than the minimum record overhead (14)"),
    (FILE, "Found record size 13 smaller than minimum record overhead (14)"),
    (INNER, "Record size is less than the minimum record overhead (14)"),
])
def test_size_below_the_v0_overhead_is_corrupt_under_every_rule(rules, message):
    buf = _with(STARTS[2], size=13)
    with pytest.raises(CorruptRecordError) as e:
        list(BatchWalker(buf, rules=rules))
    assert (e.value.position, e.value.reason) == (STARTS[2], message)


def test_file_rule_names_the_file_as_kafka_does():
    with pytest.raises(CorruptRecordError) as e:
        list(BatchWalker(_with(0, size=3), rules=FILE, file="/x/0.log"))
    assert e.value.reason == "Found record size 3 smaller than minimum record overhead (14) in file /x/0.log."


def test_max_message_size_is_a_memory_rule():
    with pytest.raises(CorruptRecordError) as e:
        list(BatchWalker(DATA, rules=MEMORY, max_message_size=len(PARTS[0]) - C.LOG_OVERHEAD))
    size = len(PARTS[1]) - C.LOG_OVERHEAD
    assert (e.value.position, e.value.reason) == (
        STARTS[1], f"Record size {size} exceeds the largest allowable message size ({len(PARTS[0]) - 12}).")
    assert len(list(BatchWalker(DATA, rules=FILE, max_message_size=1))) == 4


@pytest.mark.parametrize("magic", [3, 127, -1])
def test_magic_above_2_is_v2_for_the_file_reader_and_corrupt_in_memory(magic):
    buf = _with(STARTS[3], magic=magic)
    with pytest.raises(CorruptRecordError) as e:
        list(BatchWalker(buf))
    assert (e.value.position, e.value.reason) == (STARTS[3] + C.MAGIC_OFFSET, f"Invalid magic found in record: {magic}")
    spans = list(BatchWalker(buf, rules=FILE))
    assert spans[3].magic == magic and spans[3].is_legacy == (magic < 2)
    if magic > 2:  # kafka-dump-log's rule: read as v2; the v2 CRC does not cover the magic byte
        batch = span_batch(buf, spans[3])
        batch.ensure_valid()
        assert (batch.magic, batch.count) == (magic, 3)


@pytest.mark.java
@pytest.mark.parametrize("change", ["size 13", "magic 3", "magic -1"])
def test_memory_rule_errors_are_kafkas(kafka_oracle, change):
    what, value = change.split()
    buf = _with(STARTS[2], **{what: int(value)})
    resp = kafka_oracle.request("read", bytes=bytes(buf))
    with pytest.raises(CorruptRecordError) as e:
        list(BatchWalker(buf))
    assert (resp["ok"], resp["error"], resp["message"]) == (False, "CorruptRecordException", e.value.reason)


def test_inner_rule_is_the_legacy_wrapper_walk():
    """A wrapper's inner set is walked by INNER rules: a partial inner entry ends the set silently."""
    wrapper = read_batch(DATA, STARTS[1])
    assert [(m.offset, bytes(m.value)) for m in wrapper.inner_messages()] == [(0, b"1"), (1, b"2")]
    assert [r.offset for r in wrapper.records()] == [1, 2]
    assert wrapper.timestamp_type == TimestampType.CREATE_TIME


# --------------------------------------------------------------------------------------------------
# no second walker, no second legacy parser
def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text())


#: who may touch the log-entry framing, and why
_FRAMING_READERS = {"records/walker.py"}  # a legacy message reads its own offset and size through LEGACY_V0
#: the compiled columnar decoder (issue 8 part 2) decodes legacy messages in its kernels, from the same
#: layouts, and is tested field by field against the reference decoder, which handles every anomaly
_COMPILED = "records/fast/"
_NAME_USERS = {
    "MAGIC_OFFSET": {"constants.py", "records/walker.py"},
    "SIZE_OFFSET": {"constants.py", "records/walker.py"},
    "OFFSET_OFFSET": {"constants.py", "records/walker.py"},
    # FileRecords walks through the walker's PreadSource, which preads exactly these bytes per batch
    "HEADER_SIZE_UP_TO_MAGIC": {"constants.py", "records/walker.py"},
    # the legacy parser, and the annotator that prints each layout field by field
    "LEGACY_VALUE_LENGTH": {"layout.py", "constants.py", "records/legacy.py", "records/annotate.py", _COMPILED},
    "_MAGIC_FIELD": {"records/legacy.py"},
}
#: reading or writing with struct is for layout.py and the codecs' own framing (the Kafka protocol client is
#: the test rig's, outside the package: conformance/kafkarig/client.py)
_STRUCT_USERS = {"layout.py", "compression/gzip.py", "compression/lz4.py", "compression/snappy.py"}
_STRUCT_CODECS = {"unpack", "unpack_from", "iter_unpack", "Struct", "pack", "pack_into"}


def _allowed(rel: str, allowed) -> bool:
    return any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in allowed)


def test_no_other_module_walks_batches_or_parses_legacy_messages():
    problems = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "LOG_ENTRY":
                size_arg = any(isinstance(a, ast.Constant) and a.value == "size" for a in node.args)
                reads_size = node.func.attr in ("unpack_from", "read") or (node.func.attr == "get" and size_arg)
                if reads_size and rel not in _FRAMING_READERS:
                    problems.append(f"{rel}:{node.lineno} reads the entry size (LOG_ENTRY.{node.func.attr})")
            name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if name in _NAME_USERS and not _allowed(rel, _NAME_USERS[name]):
                problems.append(f"{rel}:{node.lineno} uses {name}")
            uses_struct = (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                           and node.value.id == "struct" and node.attr in _STRUCT_CODECS) or \
                          (isinstance(node, ast.ImportFrom) and node.module == "struct"
                           and any(a.name in _STRUCT_CODECS for a in node.names))
            if uses_struct and rel not in _STRUCT_USERS:
                problems.append(f"{rel}:{node.lineno} reads or writes bytes with struct")
            if isinstance(node, ast.ClassDef) and re.search(r"Message$|InputStream$|Walker$", node.name) and \
                    rel not in ("records/legacy.py", "records/walker.py"):
                problems.append(f"{rel}:{node.lineno} defines {node.name}")
    assert problems == []


@pytest.mark.java
def test_inner_offsets_are_java_longs_as_kafka_reads_them(kafka_oracle):
    """A v1 wrapper's ``wrapper - lastInner + inner`` wraps around as Kafka's long arithmetic does."""
    from kafkafmt import compression
    from kafkafmt.records.legacy import encode_legacy_entry, legacy_attributes
    inner = b"".join(encode_legacy_entry(o, 1, 0, 5, b"k", b"v") for o in (5, 0))  # lastInner 0: base = wrapper
    value = compression.compress(CompressionType.GZIP, inner, magic=1)
    attrs = legacy_attributes(1, CompressionType.GZIP, TimestampType.CREATE_TIME)
    data = encode_legacy_entry(C.INT64_MAX, 1, attrs, 5, None, value)
    theirs = [r["offset"] for b in kafka_oracle.call("read", bytes=data)["batches"] for r in b["records"]]
    assert [r.offset for r in MemoryRecords(data).records()] == theirs == [C.INT64_MIN + 4, C.INT64_MAX]
