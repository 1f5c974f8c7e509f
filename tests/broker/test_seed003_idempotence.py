"""Seed 003 (idempotence modes vs older message formats): the seed's design, the published variant, and
what Kafka shipped (a boolean enable.idempotence; the broker rejects idempotent batches below v2)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from broker_helpers import NOW, R, batches, v2  # noqa: E402
from kafkafmt.broker import LogConfig  # noqa: E402
from kafkafmt.broker import validate_messages_and_assign_offsets as validate
from kafkafmt.broker.idempotence import (  # noqa: E402
    BROKER_VERSIONS,
    CLIENT_VERSIONS,
    MODES,
    TOPIC_FORMATS,
    VARIANTS,
    downgrade_batch,
    matrix,
    produce_outcome,
)
from kafkafmt.errors import UnsupportedForMessageFormatError  # noqa: E402
from kafkafmt.records.record import Header  # noqa: E402


def outcome(mode, fmt, client="1.0.0", broker="1.0.0", variant="seed"):
    return produce_outcome(mode, client_version=client, broker_version=broker, topic_message_format=fmt,
                           variant=variant)


@pytest.mark.parametrize("fmt", [0, 1])
def test_seed003_background_idempotent_produce_to_an_older_format_fails(fmt):
    """Background: 'any produce requests to topics with an older message format will fail with an
    UnsupportedVersionException'.  KAFKA: the broker's LogValidator raises UnsupportedForMessageFormatException
    ('Idempotent records cannot be used with magic version N', error 43)."""
    cfg = LogConfig(message_format_version="0.10.0" if fmt == 1 else "0.9.0")
    with pytest.raises(UnsupportedForMessageFormatError) as e:
        validate(v2([R(NOW)], pid=1000, epoch=0, seq=0), cfg, now=NOW)
    assert e.value.reason == f"Idempotent records cannot be used with magic version {fmt}"
    assert outcome("true", fmt, "0.11.0", "0.11.0").error == "UnsupportedVersionException"            # SEED
    k = outcome("true", fmt, variant="kafka")
    assert (k.error, k.error_side, k.error_message) == ("UnsupportedForMessageFormatException", "broker", e.value.reason)


def test_seed003_design_three_modes_on_a_v2_topic():
    """Design: off (no idempotence), safe (best effort), required; on a v2 topic safe and required both work."""
    off, safe, req = (outcome(m, 2) for m in ("off", "safe", "required"))
    assert not off.idempotence_requested and not off.idempotence_effective and off.succeeded
    assert safe.idempotence_effective and req.idempotence_effective and safe.succeeded and req.succeeded
    assert safe.batch_stored_magic == req.batch_stored_magic == 2


@pytest.mark.parametrize("fmt", [0, 1])
def test_seed003_safe_mode_broker_downgrades_to_the_older_format(fmt):
    """'the 1.0.0 broker will automatically downgrade messages sent in safe mode ... if the topic ... is configured
    to use an older message format version'."""
    o = outcome("safe", fmt)
    assert o.succeeded and o.downgraded and o.downgraded_by == "broker"
    assert (o.batch_sent_magic, o.batch_stored_magic) == (2, fmt)
    assert not o.idempotence_effective
    assert {"producer id", "producer epoch", "sequence numbers"} <= set(o.lost)
    assert ("timestamps" in o.lost) is (fmt == 0)


@pytest.mark.parametrize("fmt", [0, 1])
def test_seed003_required_mode_broker_raises_an_error(fmt):
    o = outcome("required", fmt)
    assert o.error == "UnsupportedVersionException" and o.error_side == "broker" and not o.downgraded


@pytest.mark.parametrize("fmt", TOPIC_FORMATS)
def test_seed003_new_client_safe_mode_on_0_11_broker_disables_idempotence(fmt):
    """'if a 1.0.0 client with enable.idempotence=safe is writing to an 0.11.0 broker, idempotence will be disabled'."""
    o = outcome("safe", fmt, broker="0.11.0")
    assert o.succeeded and not o.idempotence_effective and o.idempotence_requested
    assert any("disables idempotence" in n for n in o.notes)


@pytest.mark.parametrize("fmt", TOPIC_FORMATS)
def test_seed003_true_means_required_false_means_off(fmt):
    """'a 1.0.0 producer would interpret enable.idempotence=true as required and false as off'."""
    for raw, mode in (("true", "required"), ("false", "off")):
        a, b = outcome(raw, fmt), outcome(mode, fmt)
        assert a.effective_mode == mode
        assert (a.error, a.idempotence_effective, a.batch_stored_magic) == (b.error, b.idempotence_effective,
                                                                            b.batch_stored_magic)


def test_seed003_old_client_has_only_booleans():
    o = outcome("safe", 2, client="0.11.0")
    assert o.error == "ConfigException" and o.error_side == "client"
    assert outcome("true", 2, client="0.11.0", broker="1.0.0").idempotence_effective


def test_published_variant_client_decides_from_metadata():
    """The later page: 'requested' mode; the client learns the format and disables idempotence itself, or fails
    in required mode with UnsupportedVersionException before sending."""
    r = outcome("requested", 1, variant="published")
    assert r.succeeded and r.downgraded_by == "client" and r.batch_sent_magic == 2 and not r.idempotence_effective
    q = outcome("required", 1, variant="published")
    assert (q.error, q.error_side, q.batch_sent_magic) == ("UnsupportedVersionException", "client", None)
    assert outcome("requested", 1, broker="0.11.0", variant="published").succeeded


def test_kafka_variant_keeps_a_boolean_and_the_broker_rejects():
    assert outcome("safe", 1, variant="kafka").error == "ConfigException"
    assert outcome("true", 2, variant="kafka").idempotence_effective
    assert outcome("false", 0, variant="kafka").succeeded


def test_downgrade_batch_shows_what_is_lost():
    """seed 003 Level of Effort 1 ('downgrade the message format from 0.11.0 to an older version'): on bytes."""
    data = v2([R(NOW - 1, b"a", b"1", (Header("trace", b"x"),)), R(NOW, b"b", b"2")], pid=4242, epoch=3, seq=17,
              ple=9, compression_="gzip")
    d1 = downgrade_batch(data, 1)
    (b,) = batches(d1.records)
    assert b.magic == 1 and b.producer_id == -1 and b.last_offset == 1
    assert d1.lost["producer_id"] == [4242] and d1.lost["producer_epoch"] == [3]
    assert d1.lost["sequences"] == [17, 18] and d1.lost["partition_leader_epoch"] == [9]
    assert d1.lost["headers"] == [(0, [("trace", b"x")])] and d1.lost["timestamps"] == []
    d0 = downgrade_batch(data, 0)
    assert batches(d0.records)[0].magic == 0 and d0.lost["timestamps"] == [(0, NOW - 1), (1, NOW)]


def test_matrix_covers_every_combination():
    rows = matrix()
    assert len(rows) == len(VARIANTS) * len(CLIENT_VERSIONS) * len(BROKER_VERSIONS) * len(TOPIC_FORMATS) * len(MODES)
    keys = {(r["variant"], r["client_version"], r["broker_version"], r["topic_format"], r["mode"]) for r in rows}
    assert len(keys) == len(rows)
    # on a v2 topic nothing is ever downgraded, in any variant
    assert not any(r["downgraded"] for r in rows if r["topic_format"] == 2)
    # a successful idempotent produce always stores v2
    assert all(r["batch_stored_magic"] == 2 for r in rows if r["idempotence_effective"])
    assert "trace" not in rows[0] and isinstance(rows[0]["lost"], str)


def test_outcome_trace_cites_the_seed():
    o = outcome("safe", 1)
    assert "seed 003 Design" in o.trace.sources()
