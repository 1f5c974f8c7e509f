"""How the differential runner compares: record bytes (explained where they differ), Kafka's reading of a
log against kafkafmt's field by field, and kafka-dump-log's output against ``kafkafmt dump``'s.
"""
from __future__ import annotations

import re

from kafkafmt.errors import KafkaFmtError

from .cases import Case
from .diffs import codec_normalized_diff, explain_lines_diff, explain_records_diff
from .results import AGREE, DIFFER


def compare_records(case: Case, got: bytes, want: bytes, label_b: str = "kafkafmt") -> tuple[str, str]:
    """(status, detail) of a byte comparison; a case may allow compressed payloads to be encoded
    differently (``allowCodecDifference``: why), then they must be equal once decompressed."""
    why = explain_records_diff(got, want, "broker", label_b)
    if why is None:
        return AGREE, f"{len(got)} bytes identical"
    allow = case.raw.get("allowCodecDifference")
    if allow:
        try:
            norm = codec_normalized_diff(got, want)
        except KafkaFmtError as e:
            norm = f"cannot decompress: {e}"
        if norm is None:
            return AGREE, f"identical except compressed payload bytes ({allow}); decompressed identical [{why}]"
        return DIFFER, f"{why}; even decompressed: {norm}"
    return DIFFER, why


_READ_BATCH_FIELDS = ("magic", "sizeInBytes", "isValid", "checksum", "compression", "timestampType", "maxTimestamp",
                      "baseOffset", "lastOffset", "count", "producerId", "producerEpoch", "baseSequence",
                      "lastSequence", "partitionLeaderEpoch", "isTransactional", "isControlBatch")
_READ_RECORD_FIELDS = ("offset", "timestamp", "sequence", "key", "value", "headers")


def compare_read(theirs: dict, ours: list[dict]) -> str | None:
    tb = theirs.get("batches", [])
    if len(tb) != len(ours):
        return f"Kafka reads {len(tb)} batches, kafkafmt {len(ours)}"
    for i, (t, o) in enumerate(zip(tb, ours)):
        for f in _READ_BATCH_FIELDS:
            if t.get(f) != o.get(f):
                return f"batch #{i} {f}: Kafka {t.get(f)!r} vs kafkafmt {o.get(f)!r}"
        tr, orr = t.get("records", []), o["records"]
        if len(tr) != len(orr):
            return f"batch #{i}: Kafka reads {len(tr)} records, kafkafmt {len(orr)}"
        for j, (a, b) in enumerate(zip(tr, orr)):
            for f in _READ_RECORD_FIELDS:
                if a.get(f) != b.get(f):
                    return f"batch #{i} record #{j} {f}: Kafka {a.get(f)!r} vs kafkafmt {b.get(f)!r}"
    return None


def compare_tool_outputs(j, k) -> str | None:
    """kafka-dump-log's (rc, stdout, stderr) vs kafkafmt dump's: same stdout lines; if a tool died, the
    same exception (Kafka class and message); else the same stderr report blocks (in any order)."""
    jrc, jout, jerr = j
    krc, kout, kerr = k
    jfail, kfail = tool_failure(jerr), tool_failure(kerr)
    if jfail and jout:
        # DumpLogSegments dies on the first failing file; kafkafmt dump reports it and goes on:
        # compare kafkafmt's output up to the end of that file's section
        last = max(i for i, ln in enumerate(jout) if ln.startswith("Dumping ")) if any(
            ln.startswith("Dumping ") for ln in jout) else 0
        nxt = next((i for i in range(len(jout), len(kout)) if kout[i].startswith("Dumping ")), len(kout)) \
            if kout[:last + 1] == jout[:last + 1] else len(kout)
        kout = kout[:nxt]
    why = explain_lines_diff(jout, kout)
    if why:
        return why
    if jfail or kfail:
        if not (jfail and kfail):
            return f"failure: kafka-dump-log {jfail} vs kafkafmt dump {kfail}"
        if kfail[0] == "DumpToolError":  # names its Java exception only in the API, not in the CLI text
            return None
        if jfail != kfail:
            return f"failure: kafka-dump-log {jfail} vs kafkafmt dump {kfail}"
        return None
    if stderr_blocks(jerr) != stderr_blocks(kerr):
        return explain_lines_diff(jerr, kerr, "kafka-dump-log stderr", "kafkafmt dump stderr") or \
            "stderr reports differ (order aside)"
    if (jrc == 0) != (krc == 0):
        return f"exit status: kafka-dump-log {jrc}, kafkafmt dump {krc}"
    return None


def tool_failure(lines: list[str]) -> tuple[str, str] | None:
    """(Kafka exception simple name, message) if a dump tool died: the JVM's 'Exception in thread
    "main" <class>: <message>' line, or kafkafmt's 'kafkafmt: error: <file>: <Error>: <message>'
    (mapped to the Kafka exception kafkafmt's error class mirrors)."""
    from kafkafmt import errors as kerrors
    for line in lines:
        m = re.match(r'Exception in thread "main" ([\w.$]+)(?:: (.*))?$', line)
        if m:
            return m.group(1).rsplit(".", 1)[-1], m.group(2) or ""
        m = re.match(r"kafkafmt: error: .*?: (\w+): (.*)$", line)
        if m:
            cls = getattr(kerrors, m.group(1), None)
            if cls is None:
                try:
                    from kafkafmt.log import errors as lerrors
                    cls = getattr(lerrors, m.group(1), None)
                except ImportError:
                    cls = None
            name = getattr(cls, "kafka_exception", "") or m.group(1)
            return name, m.group(2)
    return None


def stderr_blocks(lines: list[str]) -> list[tuple[str, ...]]:
    """kafka-dump-log's error reports as blocks (a header line + its indented lines), sorted: the
    tool keeps them in hash maps, so their order between files is not meaningful."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return sorted(tuple(b) for b in blocks)
