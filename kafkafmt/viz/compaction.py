"""Notebook 09 (log compaction): what Kafka 3.9's log cleaner leaves in a partition, computed by
:meth:`kafkafmt.log.Log.clean` (checked byte for byte against Kafka's ``Cleaner`` in tests/log) on
small seeded partitions under a simulated clock.

- :func:`holes`: seed 004's "holes": a v1 compressed wrapper rebuilt by ``MemoryRecords.filterTo``
  keeps its retained inner messages' offsets, so the relative offsets (KIP-31) stop being
  ``0..n-1``; the absolute offset a v1 consumer computes from each one
  (``wrapper offset − last relative offset + relative offset``, ``AbstractLegacyRecordBatch``).
- :func:`real_holes_data`, :func:`holes_by_line`: the same holes as Kafka 0.10.2.2's own cleaner left them (a
  record kept as package data, ``data/holes-0.10.2.2.json``), and what kafkafmt's lines leave from the same input.
- :func:`cleaner_lines_table`: what each release's cleaner does differently, one row per cleaner row of
  :mod:`kafkafmt.kafka_lines`, each with the real releases it was compared on
  (:mod:`kafkafmt.log.cleaner.compared`).
- :func:`tombstone_passes`: when a tombstone really disappears: v0/v1 by file times (a segment's
  tombstones go once its mtime is ``delete.retention.ms`` older than the last clean segment's,
  ``Cleaner.doClean``'s ``legacyDeleteHorizonMs``); v2 by the ``deleteHorizonMs`` the first pass
  that sees it writes into the batch header (KIP-534), removed by a later pass after it.  Both
  depend on when the cleaner happens to run.
- :func:`dedupe_passes`: a ``log.cleaner.dedupe.buffer.size`` too small for the dirty keys: each
  pass cleans the prefix its offset map covers and the checkpoint advances pass by pass.
- :func:`old_format_passes`: a topic upgraded from v1 to v2: keys never written again keep their
  v1 wrappers through every pass of 3.9's cleaner (Kafka 4.0 rewrites them as v2, KAFKA-13093).

Every partition lives in a fresh temporary directory; nothing here touches a real log.
"""
from __future__ import annotations

import os
import random
import shutil
import tempfile
import warnings
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from .. import kafka_lines as _kafka_lines
from ..log.cleaner import compared as _compared
from ..log.cleaner.table import BYTES_PER_ENTRY  # a dedupe buffer entry: MD5 (16 bytes) + offset (8 bytes)
from ..records import MemoryRecords, build_records

T0 = 1_700_000_000_000
MINUTE_MS = 60_000
SEGMENT_BYTES = 1024
FORMAT_VERSION = {0: "0.9.0", 1: "0.10.2"}


# ------------------------------------------------------------------------------------ partitions
def topic_props(magic: int, **extra) -> dict:
    """A compacted topic's settings: 1 kB segments, always dirty enough, deleted files gone at once."""
    p = {"cleanup.policy": "compact", "segment.bytes": str(SEGMENT_BYTES), "min.cleanable.dirty.ratio": "0.01",
         "delete.retention.ms": str(2 * MINUTE_MS), "file.delete.delay.ms": "0",
         "segment.index.bytes": "4096"}
    if magic < 2:
        p["message.format.version"] = FORMAT_VERSION[magic]
    p.update({k: str(v) for k, v in extra.items()})
    return p


def _config(props: dict, line: str | None = None):
    from ..config import BrokerConfig
    from ..log import LogConfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if line is None:
            return LogConfig.from_properties(props)
        return LogConfig.from_properties(props, broker=BrokerConfig(kafka_line=line))


@contextmanager
def new_partition():
    """A fresh ``<tmp>/t-0`` partition directory (its parent holds ``cleaner-offset-checkpoint``), removed after."""
    shm = Path("/dev/shm")  # tmpfs when there is one: the log's fsyncs cost nothing there
    where = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    root = Path(tempfile.mkdtemp(prefix="kafkafmt-compaction-", dir=where))
    d = root / "t-0"
    d.mkdir()
    try:
        yield d
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build(base_offset: int, records, *, magic: int, codec: str = "none") -> bytes:
    """One batch (v2) or message set (v0/v1) of ``(timestamp, key, value)``; ``value`` None = tombstone."""
    return build_records(records, magic=magic, compression=codec, base_offset=base_offset,
                         partition_leader_epoch=0 if magic >= 2 else -1)


def append(d: Path, props: dict, batches: list[bytes], now: int, *, line: str | None = None) -> None:
    """Append as a follower at ``now`` (as the broker of Kafka ``line`` does, default 3.9); the segments written
    carry ``now`` as their mtime, as a broker leaves them."""
    from ..log import Log, SimulatedClock
    from ..log.clock import set_mtime_ms
    from ..log.files import offset_from_file_name
    log = Log(d, _config(props, line), SimulatedClock(now), clean_shutdown=True)
    first_new = log.active_segment.base_offset
    for b in batches:
        log.append_as_follower(b)
    log.close()
    for p in d.glob("*.log"):
        if offset_from_file_name(p.name) >= first_new:
            set_mtime_ms(p, now)


def clean(d: Path, props: dict, now: int, *, dedupe_buffer_size: int = 1 << 20, line: str | None = None):
    """One pass of the cleaner thread at ``now`` (``Log.clean``; the cleaner of Kafka ``line``, default 3.9): the
    :class:`~kafkafmt.log.cleaner.CleanResult`."""
    from ..log import Log, SimulatedClock
    from ..log.cleaner.offset_map import CleanerConfig
    log = Log(d, _config(props, line), SimulatedClock(now), clean_shutdown=True)
    try:
        return log.clean(now=now, cleaner=CleanerConfig(dedupe_buffer_size=dedupe_buffer_size))
    finally:
        log.close()


def batches(d: Path) -> list:
    """Every batch of the partition, segment by segment, with ``segment`` (base offset) and ``mtime``."""
    from ..log.clock import mtime_ms
    from ..log.files import offset_from_file_name
    out = []
    for p in sorted(d.glob("*.log")):
        data = p.read_bytes()
        for b in MemoryRecords(data).batches():
            out.append((offset_from_file_name(p.name), mtime_ms(p), b))
    return out


def checkpoint(d: Path) -> int | None:
    """The partition's entry in ``cleaner-offset-checkpoint`` (None before the first pass)."""
    from ..log.files import checkpoint_offset
    p = d.parent / "cleaner-offset-checkpoint"
    return checkpoint_offset(p, "t", 0) if p.exists() else None


__all__ = ["T0", "MINUTE_MS", "topic_props", "new_partition", "build", "append", "clean", "batches", "checkpoint"]


# ---------------------------------------------------------------------------------------- holes
HOLES_PROPS = topic_props(1, **{"delete.retention.ms": 10 * MINUTE_MS})
HOLES_CLEAN_AT = T0 + MINUTE_MS // 2


def holes_input(keys: int = 12, *, seed: int = 3, wrappers: int = 24, per_wrapper: int = 6,
                codec: str = "gzip") -> list[bytes]:
    """``wrappers`` v1 compressed wrappers of ``per_wrapper`` records over ``keys`` keys, stamped from :data:`T0`."""
    rng = random.Random(seed)
    out, off = [], 0
    for i in range(wrappers):
        recs = [(T0 + i * 10 + j, b"k%02d" % rng.randrange(keys), b"v%d" % (off + j)) for j in range(per_wrapper)]
        out.append(build(off, recs, magic=1, codec=codec))
        off += per_wrapper
    return out


def holes_partition(d: Path, keys: int = 12, *, line: str | None = None):
    """Write :func:`holes_input` into ``d`` at :data:`T0` and clean once 30 s later (``CleanResult``), as the
    broker and cleaner of Kafka ``line`` do (default 3.9)."""
    append(d, HOLES_PROPS, holes_input(keys), T0, line=line)
    return clean(d, HOLES_PROPS, HOLES_CLEAN_AT, line=line)


@lru_cache(maxsize=64)
def cleaned_holes(keys: int = 12) -> tuple:
    """``(holed wrappers' bytes, wrappers after cleaning, records before, records after)`` for ``keys`` keys."""
    with new_partition() as d:
        r = holes_partition(d, keys)
        holed = tuple(wrapper_bytes(b) for b in holed_wrappers(d))
        return holed, len(batches(d)), r.stats.messages_read, r.stats.messages_written


def inner_messages(wrapper) -> list[dict]:
    """A v1 wrapper's inner messages as stored and as a v1 consumer reads them: the relative offset in
    the decompressed bytes, the absolute offset ``wrapper offset − last relative + relative`` (KIP-31,
    ``AbstractLegacyRecordBatch.DeepRecordsIterator``) and the hole before it."""
    data = inner_bytes(wrapper)
    inner = [(e.last_offset, e.message.key, e.position) for e in MemoryRecords(data).batches()]
    last_relative = inner[-1][0]
    rows, previous = [], None
    for k, (relative, key, pos) in enumerate(inner):
        absolute = wrapper.last_offset - last_relative + relative
        gap = 0 if previous is None else absolute - previous - 1
        rows.append({"inner": k, "at byte": pos, "relative offset (stored)": relative,
                     "absolute offset (consumer)": absolute, "key": bytes(key).decode(),
                     "hole before": f"{previous + 1}..{absolute - 1} removed" if gap > 0 else "—"})
        previous = absolute
    return rows


def holed_wrappers(d: Path) -> list:
    """The cleaned wrappers whose inner offsets are no longer consecutive (a hole inside)."""
    out = []
    for _, _, b in batches(d):
        if b.is_compressed and b.magic < 2:
            offs = [r.offset for r in b.records()]
            if any(y - x > 1 for x, y in zip(offs, offs[1:])):
                out.append(b)
    return out


def wrapper_bytes(wrapper) -> bytes:
    """The wrapper as stored in the segment (its offset and size prefix included)."""
    return bytes(wrapper.raw)


def inner_bytes(wrapper) -> bytes:
    """The wrapper's value decompressed: the inner message set with its stored (relative) offsets."""
    return bytes(wrapper.decompressed_value())


def holes_data(keys: int = 12, wrapper: int = 0) -> dict:
    """The notebook's holes panel: the ``wrapper``-th cleaned wrapper with a hole, for ``keys`` keys."""
    holed, wrappers, before, after = cleaned_holes(keys)
    if not holed:
        raise ValueError(f"with {keys} keys no cleaned wrapper has a hole (every wrapper kept all or none)")
    raw = holed[min(wrapper, len(holed) - 1)]
    w = next(MemoryRecords(raw).batches())
    return {"wrapper": w, "bytes": raw, "inner": inner_bytes(w), "rows": inner_messages(w), "holed": len(holed),
            "wrappers": wrappers, "records_before": before, "records_after": after}


def holes_caption(data: dict, values: dict) -> str:
    w, rows = data["wrapper"], data["rows"]
    removed = w.last_offset - rows[0]["absolute offset (consumer)"] + 1 - len(rows)
    rel = ", ".join(str(r["relative offset (stored)"]) for r in rows)
    return (f"<b>Wrapper at offset {w.last_offset}: {len(rows)} inner messages with relative offsets {rel}</b>, "
            f"{removed} offset{'s' if removed != 1 else ''} removed between them. {data['holed']} of the "
            f"{data['wrappers']} wrappers left by the cleaner "
            f"have holes. A v1 consumer adds each relative offset to the wrapper's offset minus the last one "
            f"({w.last_offset} − {rows[-1]['relative offset (stored)']}): the retained records keep their offsets.")


def holes_view(data: dict):
    import pandas as pd

    from .byteview import byte_view_html
    return (pd.DataFrame(data["rows"]),
            "<div style='margin-top:8px'><b>The wrapper as stored: its offset is the last inner message's</b></div>"
            + byte_view_html(data["bytes"], max_bytes=1024),
            "<div style='margin-top:8px'><b>Its value decompressed: the inner messages, stored offsets first</b></div>"
            + byte_view_html(data["inner"], max_bytes=1024))


def holes_panel():
    """Notebook 09's holes: key cardinality and which holed wrapper; the table of offsets, then its bytes."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"keys": w.IntSlider(value=12, min=4, max=40, step=1, description="keys"),
                  "wrapper": w.Dropdown(options=[0], value=0, description="wrapper")},
                 holes_data, holes_view, title="A cleaned v1 gzip wrapper: holes and absolute offsets",
                 caption=holes_caption,
                 adapt={"wrapper": lambda v: {"options": list(range(len(cleaned_holes(v["keys"])[0]))) or [0]}})


# ----------------------------------------------------------- holes as a real 0.10 cleaner left them
HOLES_RELEASE = _compared.HOLES_RELEASE
#: the line of :data:`HOLES_RELEASE`, whose rules ``kafkafmt clean --kafka-line`` applies
HOLES_LINE = _kafka_lines.check_line(HOLES_RELEASE)
#: what Kafka 0.10.2.2's own ``kafka.log.Log`` and cleaner thread left from :func:`holes_input` (12 keys), written
#: at :data:`T0` and cleaned at :data:`HOLES_CLEAN_AT` (recorded once with kafkarig.old_cleaner;
#: tests/history/test_holes_0_10_vs_kafka.py checks it against the release and ``kafkafmt clean`` against it)
REAL_HOLES_FILE = Path(__file__).resolve().parent / "data" / f"holes-{HOLES_RELEASE}.json"


def partition_files(root: Path) -> dict:
    """What a cleaner comparison covers under log directory ``root``: every ``.log``, ``.index`` and
    ``.timeindex`` file and ``cleaner-offset-checkpoint``, as ``{relative path: {"hex", "mtime_ms"}}``
    (``mtime_ms`` for a ``.log`` only: the legacy tombstone horizon reads it)."""
    from ..log.clock import mtime_ms
    out = {}
    for p in sorted(Path(root).rglob("*")):
        if p.is_file() and (p.suffix in (".log", ".index", ".timeindex") or p.name == "cleaner-offset-checkpoint"):
            out[p.relative_to(root).as_posix()] = {"hex": p.read_bytes().hex(),
                                                  "mtime_ms": mtime_ms(p) if p.suffix == ".log" else None}
    return out


@lru_cache(maxsize=1)
def real_holes() -> dict:
    """The recorded result of :data:`HOLES_RELEASE`'s cleaner (:data:`REAL_HOLES_FILE`): its ``release``,
    ``line``, the workload and times, and ``files`` as :func:`partition_files` gives them."""
    import json
    return json.loads(REAL_HOLES_FILE.read_text())


def _holed(files: dict) -> list:
    """The wrappers with a hole in the ``.log`` files of ``files``, in offset order."""
    out = []
    for name in sorted(n for n in files if n.endswith(".log")):
        for b in MemoryRecords(bytes.fromhex(files[name]["hex"])).batches():
            offs = [r.offset for r in b.records()]
            if b.is_compressed and b.magic < 2 and any(y - x > 1 for x, y in zip(offs, offs[1:])):
                out.append(b)
    return out


def real_holes_data(wrapper: int = 0) -> dict:
    """Seed 004's holes as the real :data:`HOLES_RELEASE` cleaner left them: the ``wrapper``-th rebuilt wrapper
    with a hole, its inner messages (:func:`inner_messages`), and the offsets of every holed wrapper."""
    rec = real_holes()
    holed = _holed(rec["files"])
    w = holed[min(wrapper, len(holed) - 1)]
    return {"release": rec["release"], "wrapper": w, "bytes": wrapper_bytes(w), "rows": inner_messages(w),
            "holed": [[r.offset for r in b.records()] for b in holed],
            "log_bytes": sum(len(f["hex"]) // 2 for n, f in rec["files"].items() if n.endswith(".log"))}


def holes_on_line(line: str) -> dict:
    """The files kafkafmt leaves from the recorded workload on Kafka ``line`` (written by its broker at
    :data:`T0`, cleaned by its cleaner at :data:`HOLES_CLEAN_AT`), as :func:`partition_files` gives them."""
    with new_partition() as d:
        holes_partition(d, real_holes()["workload"]["keys"], line=line)
        return partition_files(d.parent)


def holes_by_line(lines=("0.10.2", "3.9")) -> list[dict]:
    """One row for the real release and one per kafkafmt line: the holed wrappers' inner offsets, the cleaned
    ``.log`` bytes and whether every file (bytes, ``.log`` mtimes) is the real release's."""
    real = real_holes()
    rows = [{"cleaner": f"Kafka {real['release']} (real)", "holed wrappers' offsets": _offsets(real["files"]),
             "cleaned .log bytes": _log_bytes(real["files"]), f"files identical to {real['release']}'s": "—"}]
    for line in lines:
        files = holes_on_line(line)
        rows.append({"cleaner": f"kafkafmt --kafka-line {line}", "holed wrappers' offsets": _offsets(files),
                     "cleaned .log bytes": _log_bytes(files),
                     f"files identical to {real['release']}'s": "yes" if files == real["files"] else
                     "no: " + ", ".join(sorted(n for n in set(files) | set(real["files"])
                                               if files.get(n) != real["files"].get(n)))})
    return rows


def _offsets(files: dict) -> str:
    return "; ".join(",".join(str(r.offset) for r in b.records()) for b in _holed(files))


def _log_bytes(files: dict) -> int:
    return sum(len(f["hex"]) // 2 for n, f in files.items() if n.endswith(".log"))


# ------------------------------------------------------------- what each release's cleaner does
def _cell(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return "—"
    if isinstance(v, tuple):
        return " / ".join(str(x) for x in v)
    return str(v)


def by_line_runs(key: str, lines=None) -> str:
    """A kafka_lines row's value on each line, consecutive lines with the same value merged into one run:
    ``0.9: whole segments · 0.10.0: fully mapped segments · 0.10.1 – 4.4: record that fills the map``
    (a table with a column per line is wider than a page and mostly repeats itself)."""
    lines = tuple(lines or _kafka_lines.KAFKA_LINES)
    runs: list[list] = []
    for line in lines:
        v = _cell(_kafka_lines.value(key, line))
        if runs and runs[-1][2] == v:
            runs[-1][1] = line
        else:
            runs.append([line, line, v])
    return " · ".join(f"{a}: {v}" if a == b else f"{a} – {b}: {v}" for a, b, v in runs)


def cleaner_lines_table(lines=None) -> list[dict]:
    """What each release's cleaner does differently: one row per cleaner row of :mod:`kafkafmt.kafka_lines`
    (:data:`kafkafmt.log.cleaner.compared.CLEANER_KEYS_SHOWN`), its value by line (:func:`by_line_runs`), the
    releases and KIPs/JIRAs that changed it, and the real releases on which it was compared byte for byte
    (:func:`kafkafmt.log.cleaner.compared.checked_on`, derived from the comparisons the tests run)."""
    out = []
    for key in _compared.CLEANER_KEYS_SHOWN:
        rows = _kafka_lines.rows(key)
        checked = _compared.checked_on(key)
        out.append({"row": key, "by line": by_line_runs(key, lines),
                    "changed in": "; ".join(f"{r.release} ({r.source})" for r in rows),
                    "checked on": ", ".join(checked) if checked else "not compared"})
    return out


# ----------------------------------------------------------------------------------- tombstones
GONE = b"gone"


def _filler(off: int, now: int, magic: int, n: int = 4) -> tuple[list[bytes], int]:
    """``n`` one-record batches updating keys f0..f3 with 300-byte values: each phase rolls a segment."""
    out = []
    for j in range(n):
        out.append(build(off, [(now + j, b"f%d" % j, b"x" * 300)], magic=magic))
        off += 1
    return out, off


def _tombstone_state(d: Path) -> dict | None:
    """Where the tombstone of :data:`GONE` is: its offset, segment, segment mtime and deleteHorizonMs."""
    for seg, mtime, b in batches(d):
        for r in b.records():
            if r.key is not None and bytes(r.key) == GONE and r.value is None:
                return {"offset": r.offset, "segment": seg, "segment_mtime": mtime,
                        "delete_horizon_ms": b.delete_horizon_ms if b.magic >= 2 else None}
    return None


def tombstone_passes(magic: int = 2, *, first_pass_min: float = 1, interval_min: float = 1,
                     delete_retention_min: float = 2, passes: int = 8) -> list[dict]:
    """Key ``gone`` written then deleted (a tombstone) at :data:`T0`; the cleaner runs ``first_pass_min`` later,
    then every ``interval_min``, ``passes`` times; before each pass producers append to other keys (a
    segment rolls).  One row per pass: its time (min after the tombstone), whether the tombstone is still
    in the log after it, and the state the horizon is computed from."""
    props = topic_props(magic, **{"delete.retention.ms": round(delete_retention_min * MINUTE_MS)})
    rows = []
    with new_partition() as d:
        first = [build(0, [(T0, GONE, b"v")], magic=magic), build(1, [(T0, GONE, None)], magic=magic)]
        more, off = _filler(2, T0, magic)
        append(d, props, first + more, T0)
        for i in range(passes):
            now = T0 + round((first_pass_min + i * interval_min) * MINUTE_MS)
            more, off = _filler(off, now - 1000, magic)
            append(d, props, more, now - 1000)
            before = _tombstone_state(d)
            r = clean(d, props, now)
            after = _tombstone_state(d)
            rows.append({"pass": i + 1, "at_min": (now - T0) / MINUTE_MS, "cleaned": r.cleaned,
                         "tombstone": "kept" if after else "removed",
                         "segment_mtime_min": None if before is None else (before["segment_mtime"] - T0) / MINUTE_MS,
                         "delete_horizon_min": (None if after is None or after["delete_horizon_ms"] is None
                                                else (after["delete_horizon_ms"] - T0) / MINUTE_MS)})
            if after is None:
                break
    return rows


def removed_at(rows: list[dict]) -> float | None:
    """The time (min after the tombstone) of the pass that removed it; None if none did."""
    return next((r["at_min"] for r in rows if r["tombstone"] == "removed"), None)


FIRST_PASS_DELAYS = (0.25, 0.5, 1, 1.5, 2, 2.5, 3, 4)


def tombstone_sweep(delete_retention_min: float = 2, interval_min: float = 1, delays=FIRST_PASS_DELAYS) -> list[dict]:
    """:func:`removed_at` for v1 and v2 over first-pass delays: one row per (format, delay)."""
    out = []
    for magic in (1, 2):
        for delay in delays:
            rows = tombstone_passes(magic, first_pass_min=delay, interval_min=interval_min,
                                    delete_retention_min=delete_retention_min,
                                    passes=int((delete_retention_min * 3 + delay) / interval_min) + 3)
            out.append({"format": f"v{magic}", "first_pass_min": delay, "removed_at_min": removed_at(rows),
                        "passes": len(rows)})
    return out


# ------------------------------------------------------------------------------------ dedupe buffer
def map_entries(dedupe_buffer_size: int, load_factor: float = 0.9) -> int:
    """How many keys one pass may map: ``slots × load factor`` with 24 bytes a slot (``SkimpyOffsetMap``,
    ``Cleaner.buildOffsetMap``'s ``maxDesiredMapSize``)."""
    return int(dedupe_buffer_size // BYTES_PER_ENTRY * load_factor)


def dedupe_passes(dedupe_entries: int = 40, keys: int = 60, rounds: int = 3, passes: int = 12) -> list[dict]:
    """``keys`` keys each written ``rounds`` times (one 1-record v2 batch each) at :data:`T0`, cleaned every
    minute with a dedupe buffer of ``dedupe_entries`` × 24 bytes, until a pass finds nothing to clean."""
    props = topic_props(2)
    buffer = dedupe_entries * BYTES_PER_ENTRY
    rows = []
    with new_partition() as d:
        recs = [build(i, [(T0 + i, b"k%03d" % (i % keys), b"v%06d" % i + b"." * 40)], magic=2)
                for i in range(keys * rounds)]
        append(d, props, recs, T0)
        for i in range(passes):
            now = T0 + (i + 1) * MINUTE_MS
            r = clean(d, props, now, dedupe_buffer_size=buffer)
            if not r.cleaned:
                break
            rows.append({"pass": i + 1, "from_offset": r.first_dirty_offset, "mapped_up_to": r.end_offset,
                         "first_uncleanable": r.first_uncleanable_offset, "checkpoint": checkpoint(d),
                         "map_utilization": round(r.stats.buffer_utilization, 3),
                         "records_read": r.stats.messages_read, "records_written": r.stats.messages_written,
                         "records_left": sum(b.last_offset - b.base_offset + 1 for _, _, b in batches(d))})
    return rows


# ------------------------------------------------------------------------------------- old formats
def _by_magic(d: Path) -> dict:
    out = {"v1_records": 0, "v1_bytes": 0, "v2_records": 0, "v2_bytes": 0}
    for _, _, b in batches(d):
        n = sum(1 for _ in b.records())
        out[f"v{max(b.magic, 1)}_records"] += n
        out[f"v{max(b.magic, 1)}_bytes"] += b.size_in_bytes
    return out


def oldest(d: Path) -> dict:
    """The oldest retained record: offset, timestamp, key and the magic of its batch."""
    for _, _, b in batches(d):
        for r in b.records():
            return {"oldest_offset": r.offset, "oldest_magic": b.magic, "oldest_key": bytes(r.key).decode(),
                    "oldest_timestamp": r.timestamp}
    return {}


def old_format_passes(cold_keys: int = 30, hot_keys: int = 4, phases: int = 6, codec: str = "gzip") -> list[dict]:
    """A topic written in v1 (``codec`` wrappers) at :data:`T0`: ``cold_keys`` keys written once and
    ``hot_keys`` keys; then upgraded to v2, where only the hot keys are written again, a phase a
    minute, each phase followed by a cleaning pass.  One row per pass: records and bytes by format
    and the oldest retained record."""
    props = topic_props(1)
    rows = []
    with new_partition() as d:
        cold = [(T0 + i, b"c%02d" % i, b"cold-%02d" % i) for i in range(cold_keys)]
        v1, off = [], 0
        for i in range(0, cold_keys, 5):
            v1.append(build(off, cold[i:i + 5] + [(T0 + i, b"h%d" % (i % hot_keys), b"hot")], magic=1, codec=codec))
            off += len(cold[i:i + 5]) + 1
        append(d, props, v1, T0)
        for p in range(1, phases + 1):
            now = T0 + p * MINUTE_MS
            batch = []
            for j in range(12):
                batch.append(build(off, [(now + j, b"h%d" % (j % hot_keys), b"hot" + b"." * 80)], magic=2,
                                   codec=codec))
                off += 1
            append(d, props, batch, now)
            r = clean(d, props, now + MINUTE_MS // 2)
            rows.append({"pass": p, "cleaned": r.cleaned, **_by_magic(d), **oldest(d)})
    return rows


# ------------------------------------------------------------------------------------------ panels
def tombstone_data(delete_retention_min: float, interval_min: float, first_pass_min: float, magic: int) -> dict:
    """The tombstone panel: the sweep over first-pass delays (both formats) and one schedule's passes."""
    import pandas as pd
    sweep = pd.DataFrame(tombstone_sweep(delete_retention_min, interval_min))
    one = pd.DataFrame(tombstone_passes(magic, first_pass_min=first_pass_min, interval_min=interval_min,
                                        delete_retention_min=delete_retention_min,
                                        passes=int((delete_retention_min * 3 + first_pass_min) / interval_min) + 3))
    return {"sweep": sweep, "passes": one, "magic": magic}


def tombstone_caption(data: dict, values: dict) -> str:
    s, drm = data["sweep"], values["delete_retention_min"]
    span = {f: (part["removed_at_min"].min(), part["removed_at_min"].max()) for f, part in s.groupby("format")}
    one = removed_at(data["passes"].to_dict("records"))
    return (f"<b>A tombstone written at minute 0 with delete.retention.ms = {drm:g} min disappears between minute "
            f"{span['v1'][0]:g} and {span['v1'][1]:g} in v1, between {span['v2'][0]:g} and {span['v2'][1]:g} in v2</b>, "
            f"depending only on when the cleaner first ran. v2: the first pass writes deleteHorizonMs = its time + "
            f"{drm:g} min; v1: a segment's mtime against the last clean segment's mtime − {drm:g} min. "
            f"In the table (v{data['magic']}, first pass at {values['first_pass_min']:g} min) it goes at minute "
            f"{'never' if one is None else f'{one:g}'}.")


def tombstone_view(data: dict):
    from . import plots
    s = data["sweep"].rename(columns={"format": "message format"})
    fig = plots.line_plot(s, x="first_pass_min", y="removed_at_min", hue="message format",
                          hline=None, title="when the tombstone disappears, by the cleaner's first pass",
                          xlabel="first cleaning pass (min after the tombstone)",
                          ylabel="tombstone removed at (min)")
    labels = {"at_min": "pass at (min)", "segment_mtime_min": "its segment's mtime (min)",
              "delete_horizon_min": "deleteHorizonMs (min)"}
    return fig, data["passes"].rename(columns=labels)


def tombstone_panel():
    """Notebook 09's tombstones: delete.retention.ms and the pass interval drive the sweep; first pass and
    format pick the schedule shown pass by pass."""
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"delete_retention_min": w.FloatSlider(value=2, min=0.5, max=4, step=0.5,
                                                        description="delete.retention min"),
                  "interval_min": w.FloatSlider(value=1, min=0.5, max=2, step=0.5, description="passes every min"),
                  "first_pass_min": w.Dropdown(options=list(FIRST_PASS_DELAYS), value=1, description="first pass"),
                  "magic": w.Dropdown(options=[("v1", 1), ("v2", 2)], value=2, description="format")},
                 tombstone_data, tombstone_view, title="When does a tombstone disappear?", caption=tombstone_caption)


def dedupe_data(dedupe_entries: int, keys: int) -> dict:
    import pandas as pd
    return {"passes": pd.DataFrame(dedupe_passes(dedupe_entries, keys)), "entries": dedupe_entries,
            "mappable": map_entries(dedupe_entries * BYTES_PER_ENTRY), "keys": keys}


def dedupe_caption(data: dict, values: dict) -> str:
    p = data["passes"]
    return (f"<b>{len(p)} passes to clean the log once</b>: a {data['entries'] * BYTES_PER_ENTRY:,}-byte dedupe "
            f"buffer holds {data['entries']} slots, of which a pass fills {data['mappable']} (load factor 0.9); "
            f"each pass cleans the prefix up to the last offset it mapped and moves the checkpoint there "
            f"(offsets {', '.join(str(c) for c in p['checkpoint'])}).")


def dedupe_view(data: dict):
    from . import plots
    p = data["passes"]
    fig = plots.line_plot(p, x="pass", y="checkpoint", title="cleaner-offset-checkpoint after each pass",
                          xlabel="cleaning pass", ylabel="checkpoint (offset)",
                          hline=float(p["first_uncleanable"].iloc[0]) if len(p) else None)
    _integer_x(fig)
    return fig, p


def _integer_x(fig) -> None:
    from matplotlib.ticker import MaxNLocator
    fig.axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))


def dedupe_panel():
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"dedupe_entries": w.IntSlider(value=40, min=20, max=200, step=10, description="dedupe slots"),
                  "keys": w.IntSlider(value=60, min=10, max=120, step=10, description="keys")},
                 dedupe_data, dedupe_view, title="A dedupe buffer that fills", caption=dedupe_caption)


def old_format_data(cold_keys: int, codec: str):
    import pandas as pd
    return pd.DataFrame(old_format_passes(cold_keys, codec=codec))


def old_format_caption(df, values: dict) -> str:
    last = df.iloc[-1]
    return (f"<b>After {len(df)} passes the log still holds {last['v1_records']} v1 records "
            f"({last['v1_bytes']:,} bytes) beside {last['v2_records']} v2 records</b>: the {values['cold_keys']} keys "
            f"never written again keep their latest value in its v1 wrapper, and the oldest record is "
            f"offset {last['oldest_offset']} (magic {last['oldest_magic']}). Kafka 3.9's cleaner copies a "
            "retained v0/v1 wrapper as v0/v1; only Kafka 4.0's rewrites it as v2 (KAFKA-13093).")


def old_format_view(df):
    from . import plots
    long = df.melt(id_vars="pass", value_vars=["v1_bytes", "v2_bytes"], var_name="format", value_name="bytes")
    long["format"] = long["format"].str.replace("_bytes", "")
    fig = plots.line_plot(long, x="pass", y="bytes", hue="format", hue_label="message format",
                          title="bytes left in the log by message format", xlabel="cleaning pass (one a minute)",
                          ylabel="bytes")
    _integer_x(fig)
    return fig, df.drop(columns=["oldest_timestamp"])


def old_format_panel():
    import ipywidgets as w

    from .widgets import Panel
    return Panel({"cold_keys": w.IntSlider(value=30, min=5, max=60, step=5, description="cold keys"),
                  "codec": w.Dropdown(options=["none", "gzip", "lz4"], value="gzip", description="codec")},
                 old_format_data, old_format_view, title="What old-format data a compacted topic keeps",
                 caption=old_format_caption)
