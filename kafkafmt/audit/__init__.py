"""What a broker's log directories hold, and what a Kafka line will do with it (``kafkafmt audit``).

:func:`audit_log_dirs` reads one or more ``log.dirs`` entries (or partition directories) read-only and
returns an :class:`AuditReport`: per topic-partition the message formats on disk (batches, records,
bytes), timestamp types, whether the topic is compacted, when retention deletes its v0/v1 data, what
Kafka 4.x's cleaner makes of it (KAFKA-13093; a cleaned temporary copy) and which client generations the target line no
longer answers (KIP-896).  :mod:`kafkafmt.audit.render` turns a report into a table, JSON or HTML.

Modules: ``scan`` (one segment, read-only), ``topics`` (each topic's cleanup.policy and retention),
``clients`` (client generations vs the line's rows), ``cleaning`` (the target's cleaner over a temporary
copy of a compacted partition), ``report`` (the audit), ``render`` (output).
"""
from .clients import client_verdicts
from .report import AuditReport, PartitionAudit, audit_log_dirs, audit_partition, plan_audit
from .topics import TopicSetting, parse_topic_options, topic_setting

__all__ = ["audit_log_dirs", "audit_partition", "plan_audit", "AuditReport", "PartitionAudit", "TopicSetting",
           "topic_setting", "parse_topic_options", "client_verdicts"]
