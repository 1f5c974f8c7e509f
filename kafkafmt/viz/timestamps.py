"""Notebook 02 (KIP-32 timestamps): producers with skewed clocks against the broker's timestamp
bounds, and the timestamps each reader sees.

Every outcome comes from the broker model: :func:`kafkafmt.broker.validator.validate_messages_and_assign_offsets`
(``LogValidator.validateTimestamp``: ``max.message.time.difference.ms`` and Kafka 3.6+'s
``message.timestamp.before.max.ms`` / ``after.max.ms``, KIP-937), :func:`kafkafmt.broker.fetch.fetch`
(down-conversion for old fetch versions) and :func:`kafkafmt.broker.consumer.consumer_view`.
"""
from __future__ import annotations

from ..broker.consumer import consumer_view
from ..broker.fetch import fetch
from ..broker.validator import validate_messages_and_assign_offsets
from ..config import LogConfig
from ..constants import INT64_MAX
from ..errors import KafkaFmtError
from ..records import MemoryRecords, build_records

NOW_MS = 1_700_000_000_000
HOUR_MS = 3_600_000
#: the readers of notebook 02: a 0.9 consumer reads v0 only, a 0.10 consumer v0/v1, a current one v2
READERS = {"consumer 0.9 (fetch v1)": 0, "consumer 0.10 (fetch v3)": 1, "consumer 3.9 (latest fetch)": 2}


def topic_config(*, timestamp_type: str = "CreateTime", difference_max_ms: int = INT64_MAX,
                 before_max_ms: int = INT64_MAX, after_max_ms: int = INT64_MAX,
                 message_format_version: str = "3.0-IV1") -> LogConfig:
    """A topic with Kafka's timestamp settings (``INT64_MAX`` = Kafka's default: no bound)."""
    return LogConfig(timestamp_type=timestamp_type, timestamp_difference_max_ms=difference_max_ms,
                       timestamp_before_max_ms=before_max_ms, timestamp_after_max_ms=after_max_ms,
                       message_format_version=message_format_version)


def producer_batch(create_times: list[int], *, codec: str = "none", magic: int = 2) -> bytes:
    """What a producer sends: one batch of records stamped ``create_times`` (base offset 0)."""
    return build_records([(ts, f"k{i}".encode(), f"value-{i}".encode()) for i, ts in enumerate(create_times)],
                         magic=magic, compression=codec)


def skew_outcomes(skews_ms, config: LogConfig, *, now: int = NOW_MS) -> list[dict]:
    """One produce per skewed producer clock (CreateTime = now + skew): appended or rejected, and what is stored."""
    rows, offset = [], 0
    for skew in skews_ms:
        ts = now + int(skew)
        row = {"skew_ms": int(skew), "create_time": ts}
        try:
            res = validate_messages_and_assign_offsets(producer_batch([ts]), config, offset=offset, now=now)
        except KafkaFmtError as e:
            row.update(outcome="rejected", error=e.kafka_exception, stored_timestamp=None, reason=e.reason)
        else:
            rec = next(MemoryRecords(res.records).records())
            row.update(outcome="appended", error=None, stored_timestamp=rec.timestamp,
                       reason="rewritten to broker time (LogAppendTime)" if rec.timestamp != ts else "kept")
            offset = res.next_offset
        rows.append(row)
    return rows


def skew_table(max_skew_h: float, *, producers: int = 9, before_h: float | None = None, after_h: float | None = None,
               difference_h: float | None = None, timestamp_type: str = "CreateTime"):
    """:func:`skew_outcomes` for ``producers`` clocks spread evenly over ``±max_skew_h`` hours, as a DataFrame.

    Bounds in hours; ``None`` = unbounded (Kafka's default Long.MAX_VALUE).
    """
    import pandas as pd
    if producers < 2:
        raise ValueError("need at least two producers to spread the skew")
    if max_skew_h < 0:
        raise ValueError("max skew must be >= 0")

    def ms(h):  # a negative bound is left to LogConfig, which rejects it as Kafka's LogConfig does
        return INT64_MAX if h is None else int(h * HOUR_MS)
    cfg = topic_config(timestamp_type=timestamp_type, difference_max_ms=ms(difference_h), before_max_ms=ms(before_h),
                       after_max_ms=ms(after_h))
    step = 2 * max_skew_h / (producers - 1)
    skews = [int((-max_skew_h + i * step) * HOUR_MS) for i in range(producers)]
    df = pd.DataFrame(skew_outcomes(skews, cfg))
    df["stored_timestamp"] = df["stored_timestamp"].astype("Int64")  # None (rejected) stays missing, not NaN
    df.insert(1, "skew_h", df["skew_ms"] / HOUR_MS)
    return df


def rejected_count(df) -> int:
    """How many producers of a :func:`skew_table` were rejected."""
    return int((df["outcome"] == "rejected").sum())


def reader_views(*, timestamp_type: str = "CreateTime", message_format_version: str = "0.10.0", codec: str = "gzip",
                 skew_ms: int = -5000, n: int = 3, now: int = NOW_MS) -> list[dict]:
    """The timestamps of one produce as the leader stores it, a follower copies it, and each reader sees it.

    The producer's records are stamped ``now + skew_ms + i``; the topic keeps ``message_format_version``
    (``0.10.0`` → v1 wrappers, where wrapper and inner timestamps differ under LogAppendTime).
    """
    cfg = topic_config(timestamp_type=timestamp_type, message_format_version=message_format_version)
    sent = producer_batch([now + skew_ms + i for i in range(n)], codec=codec)
    leader = validate_messages_and_assign_offsets(sent, cfg, offset=0, now=now)
    follower = validate_messages_and_assign_offsets(leader.records, cfg, offset=0, now=now + 1, origin="REPLICATION")
    rows = []
    for who, data in (("leader (stored)", leader.records), ("follower (copied)", follower.records)):
        for b in MemoryRecords(data).batches():
            rows.append({"where": who, "format": f"v{b.magic}", "wrapper/batch timestamp": b.max_timestamp,
                         "timestamp type": b.timestamp_type.kafka_name,
                         "record timestamps": [r.timestamp for r in b.records()]})
    for who, magic in READERS.items():
        res = fetch(leader.records, topic_config=cfg, client_max_magic=magic)
        view = consumer_view(res.records, client_magic=magic)
        rows.append({"where": who, "format": f"v{res.to_magic if res.to_magic is not None else leader.to_magic}",
                     "wrapper/batch timestamp": None,
                     "timestamp type": view.records[0].timestamp_type.kafka_name if view.records else None,
                     "record timestamps": view.timestamps})
    return rows


# ------------------------------------------------------------------------------------------------
# the notebook's panels
def skew_caption(df, values: dict) -> str:
    """How many producers are rejected, by which bound, and where the outcome turns over."""
    n, r = len(df), rejected_count(df)
    if values["timestamp_type"] == "LogAppendTime":
        return (f"<b>0 of {n} producers rejected</b>: under LogAppendTime no bound applies and every stored "
                "timestamp is the broker's own clock (the bounds are off).")
    rejected = df["outcome"] == "rejected"
    behind, ahead = int((rejected & (df["skew_h"] < 0)).sum()), int((rejected & (df["skew_h"] > 0)).sum())
    return (f"<b>{r} of {n} producers rejected</b>: {behind} with clocks more than {values['before_h']:g} h behind "
            f"the broker (message.timestamp.before.max.ms) and {ahead} with clocks more than {values['after_h']:g} h "
            f"ahead (after.max.ms). The outcome turns over exactly at the bounds: a producer inside the shaded window "
            f"is appended with its own timestamp.")


def skew_view(df):
    """The skew bars (green appended, red rejected) with the accepted window shaded, and the table."""
    from . import plots, tables
    before, after = df.attrs.get("before_h"), df.attrs.get("after_h")
    band = None if before is None else (-before, after, f"accepted window (−{before:g} h … +{after:g} h)")
    fig = plots.bar_plot([f"p{i}" for i in range(len(df))], df["skew_h"], xlabel="producer",
                         ylabel="producer clock − broker clock (h)", value_fmt="+.1f", band=band,
                         colors=[plots.GREEN if o == "appended" else plots.RED for o in df["outcome"]],
                         legend=[(plots.GREEN, "appended"), (plots.RED, "rejected")],
                         title=f"{rejected_count(df)} of {len(df)} producers rejected")
    shown = df[["skew_h", "outcome", "error", "create_time", "stored_timestamp", "reason"]]
    return fig, tables.table_html(shown, labels={"skew_h": "clock skew"}, units={"skew_h": "h"},
                                  times={"create_time": NOW_MS, "stored_timestamp": NOW_MS},
                                  outcomes=("outcome",))


def skew_panel():
    """Notebook 02's skewed producers against ``message.timestamp.before/after.max.ms`` (KIP-937; bounds ≥ 0,
    off under LogAppendTime)."""
    import ipywidgets as w

    from .widgets import Panel

    def compute(max_skew_h, before_h, after_h, timestamp_type):
        df = skew_table(max_skew_h, before_h=before_h, after_h=after_h, timestamp_type=timestamp_type)
        if timestamp_type == "CreateTime":
            df.attrs.update(before_h=before_h, after_h=after_h)
        return df

    def bound(v):
        lat = v["timestamp_type"] == "LogAppendTime"
        return {"disabled": lat, "tooltip": "not applied under LogAppendTime" if lat else "hours"}
    return Panel(
        {"max_skew_h": w.FloatSlider(value=2, min=0, max=6, step=0.5, description="max skew h"),
         "before_h": w.FloatSlider(value=1, min=0, max=6, step=0.5, description="before h"),
         "after_h": w.FloatSlider(value=1, min=0, max=6, step=0.5, description="after h"),
         "timestamp_type": w.Dropdown(options=["CreateTime", "LogAppendTime"], description="type")},
        compute, skew_view, title="Which producers get through", caption=skew_caption,
        adapt={"before_h": bound, "after_h": bound})


def readers_caption(df, values: dict) -> str:
    """What the current and the 0.9 consumer see."""
    cur = df[df["where"] == "consumer 3.9 (latest fetch)"]["record timestamps"].item()
    old = df[df["where"] == "consumer 0.9 (fetch v1)"]["record timestamps"].item()
    from .tables import duration
    shift = "the broker's append time" if set(cur) == {NOW_MS} else (
        f"the producer's clock ({duration(cur[0] - NOW_MS, signed=True)} from the broker)")
    return (f"Under {values['timestamp_type']} the current consumer sees <b>{shift}</b>; a 0.9 consumer "
            f"(message format v0) sees {'no timestamp (-1)' if set(old) == {-1} else old}.")


def readers_panel():
    """Notebook 02's leader / follower / consumer timestamps for one produce."""
    import ipywidgets as w
    import pandas as pd

    from . import tables
    from .widgets import Panel

    def compute(timestamp_type, message_format_version, codec):
        return pd.DataFrame(reader_views(timestamp_type=timestamp_type, message_format_version=message_format_version,
                                         codec=codec))
    return Panel(
        {"timestamp_type": w.Dropdown(options=["CreateTime", "LogAppendTime"], description="type"),
         "message_format_version": w.Dropdown(options=[("0.9.0 (v0)", "0.9.0"), ("0.10.0 (v1)", "0.10.0"),
                                                       ("3.0-IV1 (v2)", "3.0-IV1")], value="0.10.0",
                                              description="format"),
         "codec": w.Dropdown(options=["none", "gzip", "lz4"], value="gzip", description="codec")},
        compute, lambda df: tables.table_html(df, times={"wrapper/batch timestamp": NOW_MS,
                                                         "record timestamps": NOW_MS}),
        title="Who sees which timestamp", caption=readers_caption)


__all__ = ["skew_panel", "skew_view", "skew_caption", "readers_panel", "readers_caption", "topic_config",
           "producer_batch", "skew_outcomes", "skew_table", "rejected_count", "reader_views", "READERS", "NOW_MS",
           "HOUR_MS"]
