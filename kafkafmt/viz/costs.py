"""Notebook 05 (KIP-31, KIP-32): what serving a fetch costs the broker, zero-copy against
down-conversion, per fetch version; and what KIP-31's relative offsets save on the produce path.

The log is built by kafkafmt's builder as a leader stores it; the costs are kafkafmt's accounting of
``KafkaApis.maybeConvertFetchedData`` / ``RecordsUtil.downConvert`` (:func:`kafkafmt.broker.fetch.fetch`)
and of ``LogValidator`` (:func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`).
Counts (bytes, records, codec calls) are computed; ``cpu_ms`` is measured and kept in its own column.
"""
from __future__ import annotations

from ..broker.fetch import LATEST_FETCH_VERSION, fetch, max_magic_for_fetch_version
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import LogConfig
from .anatomy import build, sample_records

#: one fetch version per message format a client can read (0.9: v1, 0.10: v3, 0.11+: v4 ... latest)
FETCH_VERSIONS = (1, 3, 4, LATEST_FETCH_VERSION)
FORMAT_VERSIONS = {0: "0.9.0", 1: "0.10.0", 2: "3.0-IV1"}
COUNTS = ("bytes_read", "bytes_out", "records_touched", "batches_rebuilt", "decompressions", "compressions",
          "bytes_decompressed", "bytes_compressed")


def sample_log(*, magic: int = 2, codec: str = "lz4", batches: int = 10, records_per_batch: int = 100,
               seed: int = 0) -> bytes:
    """A partition's log as the leader stored it: ``batches`` batches of ``records_per_batch``, contiguous offsets."""
    if batches < 1 or records_per_batch < 1:
        raise ValueError("need at least one batch of one record")
    out, offset = [], 0
    for i in range(batches):
        recs = sample_records(records_per_batch, seed=seed * 1000 + i)
        out.append(build(magic, codec, recs, base_offset=offset))
        offset += records_per_batch
    return b"".join(out)


def fetch_costs(log: bytes, *, topic_magic: int = 2) -> list[dict]:
    """One row per fetch version in :data:`FETCH_VERSIONS`: zero-copy or converted, and what it cost."""
    cfg = LogConfig(message_format_version=FORMAT_VERSIONS[topic_magic])
    rows = []
    for v in FETCH_VERSIONS:
        res = fetch(log, topic_config=cfg, fetch_version=v)
        c = res.cost.to_dict()
        rows.append({"fetch_version": v, "client_reads_up_to": f"v{max_magic_for_fetch_version(v)}",
                     "zero_copy": res.zero_copy, "to_magic": "-" if res.to_magic is None else f"v{res.to_magic}",
                     **{k: c[k] for k in COUNTS}, "cpu_ms": c["cpu_time_ns"] / 1e6})
    return rows


def costs_table(*, magic: int = 2, codec: str = "lz4", batches: int = 10, records_per_batch: int = 100):
    """:func:`fetch_costs` over :func:`sample_log` as a DataFrame (the topic's format = the log's)."""
    import pandas as pd
    return pd.DataFrame(fetch_costs(sample_log(magic=magic, codec=codec, batches=batches,
                                               records_per_batch=records_per_batch), topic_magic=magic))


def produce_paths(*, codec: str = "gzip", records: int = 50, log_end_offset: int = 1000) -> list[dict]:
    """A producer's compressed v1 message set appended at ``log_end_offset`` to a v0, v1 and v2 topic.

    KIP-31: with v1's relative inner offsets the broker only sets the wrapper offset (in place, no
    recompression); a v0 topic needs absolute inner offsets, so the set is decompressed, rewritten and
    recompressed.
    """
    data = build(1, codec, sample_records(records))
    rows = []
    for magic, version in FORMAT_VERSIONS.items():
        res = validate_messages_and_assign_offsets(data, LogConfig(message_format_version=version),
                                                   offset=log_end_offset, now=1_700_000_000_000)
        rows.append({"topic_format": f"v{magic}", "path": res.path, "converted": res.converted,
                     "recompressed": res.recompressed, "bytes_in": len(data), "bytes_stored": len(res.records),
                     "temporary_memory_bytes": res.stats.temporary_memory_bytes,
                     "first_offset": res.first_offset, "last_offset": res.last_offset})
    return rows


# ------------------------------------------------------------------------------------------------
# the notebook's panels
def costs_caption(df, values: dict) -> str:
    """What the oldest client's fetch costs against the zero-copy ones, in words."""
    from .tables import number
    conv = df[~df["zero_copy"]]
    zero = df[df["zero_copy"]]
    zc = ", ".join(f"v{v}" for v in zero["fetch_version"]) or "none"
    if conv.empty:
        return f"Every fetch version here is served zero-copy ({zc})."
    worst = conv.loc[conv["records_touched"].idxmax()]
    return (f"A v{values['magic']} {values['codec']} log of {number(df['bytes_read'].iloc[0])} bytes: "
            f"<b>a fetch v{int(worst['fetch_version'])} re-encodes {number(worst['records_touched'])} records</b> "
            f"({number(worst['decompressions'])} decompressions, {number(worst['compressions'])} compressions) and "
            f"sends {worst['bytes_out'] / worst['bytes_read']:.2f}× the bytes; fetch versions {zc} are zero-copy. "
            "The turn is the client's format: a fetch is zero-copy exactly when the client reads the log's format.")


def costs_view(df):
    """Computed counts (records re-encoded per fetch version, zero-copy labelled) apart from the measured CPU time."""
    from . import plots, tables
    labels = [f"fetch v{v}" for v in df["fetch_version"]]
    counts = plots.bar_plot(labels, df["records_touched"], xlabel="fetch request version",
                            ylabel="records re-encoded (count)",
                            bar_text=["0 · zero-copy" if z else tables.number(v)
                                      for z, v in zip(df["zero_copy"], df["records_touched"])],
                            colors=[plots.GREEN if z else plots.AMBER for z in df["zero_copy"]],
                            legend=[(plots.GREEN, "zero-copy"), (plots.AMBER, "down-converted")],
                            title="computed: records re-encoded per fetch")
    cpu = plots.bar_plot(labels, df["cpu_ms"], xlabel="fetch request version", ylabel="CPU time (ms, this run)",
                         value_fmt=".2f", colors=[plots.GREY] * len(df),
                         title="measured in this run (varies from run to run)")
    cpu.set_size_inches(7.2, 2.6)
    cpu.axes[0].patch.set_facecolor("#f4f4f4")
    table = tables.table_html(df.drop(columns=["cpu_ms"]), units={"bytes_read": "bytes", "bytes_out": "bytes",
                                                                  "bytes_decompressed": "bytes",
                                                                  "bytes_compressed": "bytes"})
    return (counts, table, "<div style='margin-top:10px;padding:6px;border-top:2px dashed #999;color:#444'>"
            "<b>Measured, not computed:</b> the CPU time of each fetch in this run on this machine.</div>", cpu)


def costs_panel():
    """Notebook 05's fetch costs: log format, codec (zstd for v2 only), records per batch."""
    import ipywidgets as w

    from .anatomy import codecs_for
    from .byteview import FORMAT_NAMES
    from .widgets import Panel
    return Panel({"magic": w.Dropdown(options=[(FORMAT_NAMES[1], 1), (FORMAT_NAMES[2], 2)], value=2,
                                      description="log format", style={"description_width": "initial"},
                                      layout=w.Layout(width="330px")),
                  "codec": w.Dropdown(options=codecs_for(2), value="lz4", description="codec"),
                  "records_per_batch": w.IntSlider(value=100, min=10, max=500, step=10, description="per batch")},
                 costs_table, costs_view, title="Fetch costs", caption=costs_caption,
                 adapt={"codec": lambda v: {"options": codecs_for(v["magic"])}})


def produce_paths_table(codec: str = "gzip"):
    """:func:`produce_paths` as a table for people (a cell's output)."""
    from . import tables
    return tables.show(produce_paths(codec=codec),
                             units={"bytes_in": "bytes", "bytes_stored": "bytes", "temporary_memory_bytes": "bytes"},
                             labels={"temporary_memory_bytes": "temporary memory", "path": "LogValidator path"})


__all__ = ["costs_panel", "costs_view", "costs_caption", "produce_paths_table", "sample_log", "fetch_costs",
           "costs_table", "produce_paths", "FETCH_VERSIONS", "FORMAT_VERSIONS", "COUNTS"]
