"""Notebook 01 (format anatomy): build record sets in v0, v1 or v2, and measure per-record overhead.

Everything is built with :class:`kafkafmt.records.MemoryRecordsBuilder` (Kafka's builder rules) and
measured on the bytes it writes; nothing here knows a header size by heart.
"""
from __future__ import annotations

from ..constants import RECORD_BATCH_OVERHEAD
from ..records.sample_sets import MAGICS, START_MS, build, sample_records  # noqa: F401 (the views' record sets)

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def record_set(magic: int = 2, codec: str = "none", count: int = 2, headers: int = 0, *, value_size: int = 12,
               key_size: int = 4, seed: int = 0) -> bytes:
    """The record set of notebook 01's byte view: ``count`` sample records with ``headers`` headers each."""
    return build(magic, codec, sample_records(count, key_size=key_size, value_size=value_size, seed=seed,
                                              headers=headers))


def payload_bytes(records: list[tuple]) -> int:
    """Key + value bytes of ``records`` (what the application wrote; headers count as overhead)."""
    return sum(len(k or b"") + len(v or b"") for _, k, v, _ in records)


def overhead_row(magic: int, codec: str, n: int, *, key_size: int = 8, value_size: int = 32, seed: int = 0) -> dict:
    """Size of ``n`` records in one record set and the per-record overhead ``(size - payload) / n``.

    A negative overhead means the codec saved more than the format costs.
    """
    recs = sample_records(n, key_size=key_size, value_size=value_size, seed=seed)
    size = len(build(magic, codec, recs))
    payload = payload_bytes(recs)
    return {"magic": magic, "codec": codec, "records": n, "size": size, "payload": payload,
            "overhead_per_record": (size - payload) / n}


def overhead_table(batch_sizes=(1, 2, 5, 10, 20, 50, 100, 200), *, magics=MAGICS, codecs=CODECS, key_size: int = 8,
                   value_size: int = 32, seed: int = 0):
    """A DataFrame of :func:`overhead_row` for every magic × codec × batch size.

    zstd exists for v2 only (KIP-110: ``MemoryRecordsBuilder`` refuses it below magic 2), so its
    v0/v1 rows are left out.
    """
    import pandas as pd
    return pd.DataFrame([overhead_row(m, c, n, key_size=key_size, value_size=value_size, seed=seed)
                         for m in magics for c in codecs if not (c == "zstd" and m < 2) for n in batch_sizes])


def single_record_overhead(magic: int, *, key_size: int = 8, value_size: int = 32) -> int:
    """Bytes a lone uncompressed record costs beyond its key and value in format ``magic``."""
    return int(overhead_row(magic, "none", 1, key_size=key_size, value_size=value_size)["overhead_per_record"])


def v2_break_even(*, key_size: int = 8, value_size: int = 32, max_records: int = 64) -> int | None:
    """The smallest uncompressed batch size at which v2 costs fewer bytes per record than v1.

    v2 pays its batch header once and varint-framed records after it; v1 pays the log overhead
    and the message header on every message (KIP-98's record batch design).
    """
    for n in range(1, max_records + 1):
        v1 = overhead_row(1, "none", n, key_size=key_size, value_size=value_size)["overhead_per_record"]
        v2 = overhead_row(2, "none", n, key_size=key_size, value_size=value_size)["overhead_per_record"]
        if v2 < v1:
            return n
    return None


# ------------------------------------------------------------------------------------------------
# the notebook's panels
def codecs_for(magic: int) -> tuple[str, ...]:
    """The codecs a record set of format ``magic`` can use: zstd needs v2 (KIP-110)."""
    return CODECS if magic >= 2 else tuple(c for c in CODECS if c != "zstd")


def byte_caption(data: bytes, values: dict) -> str:
    """The byte view's headline: total size, payload, framing per record, and where v2 starts to pay."""
    recs = sample_records(values["count"], key_size=4, value_size=12, headers=values["headers"])
    payload = payload_bytes(recs)
    per = (len(data) - payload) / values["count"]
    be = v2_break_even(key_size=4, value_size=12)
    turn = (f"A v2 batch pays its {RECORD_BATCH_OVERHEAD}-byte header once: from {be} records on it costs "
            f"fewer bytes per record than v1 (uncompressed, these record sizes).")
    hdr = "" if values["magic"] >= 2 else " Headers need v2 (KIP-82), so the headers control is off for v0/v1."
    return (f"<b>{len(data)} bytes</b> for {values['count']} records: {payload} bytes of keys and values, "
            f"<b>{per:.1f} bytes of format per record</b>. {turn}{hdr}")


def byte_panel():
    """Notebook 01's byte view: format, codec (per format), records and headers (v2 only)."""
    import ipywidgets as w

    from . import byteview
    from .widgets import Panel
    return Panel(
        {"magic": w.Dropdown(options=[(byteview.FORMAT_NAMES[m], m) for m in MAGICS], value=2, description="format",
                             style={"description_width": "initial"}, layout=w.Layout(width="310px")),
         "codec": w.Dropdown(options=CODECS, value="none", description="codec", layout=w.Layout(width="180px")),
         "count": w.IntSlider(value=2, min=1, max=6, description="records"),
         "headers": w.IntSlider(value=1, min=0, max=3, description="headers")},
        record_set, byteview.byte_view_html, title="Record set bytes", caption=byte_caption,
        adapt={"codec": lambda v: {"options": codecs_for(v["magic"])},
               "headers": lambda v: ({"disabled": False, "tooltip": "record headers (KIP-82, v2)"}
                                     if v["magic"] >= 2 else
                                     {"disabled": True, "value": 0,
                                      "tooltip": "v0 and v1 have no record headers (KIP-82 came with v2)"})})


def overhead_caption(df, values: dict) -> str:
    """Per-record overhead at 200 records and the batch size from which v2 is cheaper than v1."""
    at = df[df["records"] == df["records"].max()].set_index("magic")["overhead_per_record"]
    cheaper = [n for n in sorted(df["records"].unique())
               if 1 in at.index and df[(df.magic == 2) & (df.records == n)]["overhead_per_record"].item()
               < df[(df.magic == 1) & (df.records == n)]["overhead_per_record"].item()]
    n = int(df["records"].max())
    parts = [f"v{m}: <b>{at[m]:.1f}</b>" for m in at.index]
    if values["codec"] == "none":
        exact = v2_break_even(value_size=values["value_size"])
        cheaper = [exact] if exact is not None else []
    turn = (f"v2 costs less per record than v1 from {cheaper[0]} records per batch on"
            + ("." if values["codec"] == "none" else " (of the batch sizes plotted).") if cheaper and 1 in at.index
            else "zstd exists for v2 only (KIP-110), so there is no v0/v1 line." if 1 not in at.index
            else "v2 never costs less per record than v1 here.")
    below = " Below zero the codec saves more than the format costs." if at.min() < 0 else ""
    return (f"{values['codec']}, {values['value_size']}-byte values, {n} records per batch: bytes per record beyond "
            f"key and value: {', '.join(parts)}. {turn}{below}")


def overhead_panel():
    """Notebook 01's overhead plot: bytes per record beyond key and value, against batch size, per format."""
    import ipywidgets as w

    from . import plots
    from .widgets import Panel

    def render(df):
        return plots.line_plot(df.assign(format=[f"v{m}" for m in df["magic"]]), x="records", y="overhead_per_record",
                               hue="format", hue_label="message format", logx=True, hline=0,
                               title=f"per-record overhead, codec {df['codec'].iloc[0]}",
                               xlabel="records per batch (log scale)", ylabel="bytes per record beyond key + value")
    return Panel({"codec": w.Dropdown(options=CODECS, value="none", description="codec"),
                  "value_size": w.IntSlider(value=32, min=4, max=256, step=4, description="value bytes")},
                 lambda codec, value_size: overhead_table(codecs=(codec,), value_size=value_size), render,
                 title="Overhead per record", caption=overhead_caption)


__all__ = ["codecs_for", "byte_panel", "byte_caption", "overhead_panel", "overhead_caption", "sample_records",
           "build", "record_set", "payload_bytes", "overhead_row", "overhead_table", "single_record_overhead",
           "v2_break_even", "MAGICS", "CODECS"]
