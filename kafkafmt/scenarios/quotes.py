"""The seeds' own sentences that scenarios cite, verbatim (``/work/shared/seeds``; tests check each).

Keys are stable ids used in scenario files (``cite:``, ``warn:``) and by the runner's automatic
warnings.  The text is copied as the captured pages have it, typos and merged old/new wording included.
"""
from __future__ import annotations

#: seed file prefix → what it is
SEEDS = {"000": "KIP-32 (timestamps, phased upgrade)", "002": "KIP-228 (negative timestamps)",
         "003": "idempotence modes (KIP-185 discussion)", "004": "KIP-31 (relative offsets, message.format.version)"}

QUOTES: dict[str, tuple[str, str]] = {
    # seed 000, KIP-32: the phased rolling upgrade
    "000.p1.1": ("000", "Set message.format.version=0.9.0 on brokers. (Broker will write MessageAndOffset V0 to disk)"),
    "000.p1.2": ("000", "Create internal ApiVersion 0.9.0-1 ** which uses ProducerRequest V2 and FetchRequest V2."),
    "000.p1.3": ("000", "Configure the broker to use ApiVersion 0.9.0 (ProduceRequest V1 and FetchRequest V1)."),
    "000.p1.4": ("000", "Do a rolling upgrade of the brokers to let the broker pick up the new code supporting "
                        "ApiVersion 0.9.0-1."),
    "000.p1.5": ("000", "Bump up ApiVersion of broker to 0.9.0-1 to let the broker use FetchRequest V2 for replication."),
    "000.p1.6": ("000", "Upgraded brokers support both ProducerRequest V2 and FetchRequest V2 which uses magic byte 1 "
                        "for MessageAndOffset."),
    "000.p1.6.1": ("000", "When broker sees a producer request V1 (MessageAndOffset = V0), it will decompress the "
                          "message, assign offsets using absolute offsets and re-compress the message."),
    "000.p1.6.2": ("000", "When broker sees a producer request V2 (MessageAndOffset = V1), it will decompress the "
                          "message, assign offsets using absolute offsets, ignore the time field and do re-compression."
                          "  i.e. down-convert the message format to MessageAndOffset V0."),
    "000.p1.6.3": ("000", "When broker sees a fetch request V1 (Supporting MessageAndOffset = V0), because the data "
                          "format on disk is MessageAndOffset V0, it will use the zero-copy transfer to reply with "
                          "fetch response V1 with MessageAndOffset V0."),
    "000.p1.6.4": ("000", "When broker sees a fetch request V2 (Supporting MessageAndOffset = V0, V1), because the data "
                          "format on disk is MessageAndOffset V0, it will use zero-copy transfer to reply with fetch "
                          "response V2 with MessageAndOffset V0."),
    "000.p1.7": ("000", "Upgrade consumer to send FetchRequest V2."),
    "000.p1.8": ("000", "Upgrade producer to send ProducerRequest V2."),
    "000.p2.1": ("000", "After most of the consumers are upgraded, Bump up message.format.version=1 0.10.0 and rolling "
                        "bounce the brokers."),
    "000.p2.2.1": ("000", "When broker sees a producer request V1 (MessageAndOffset = V0), it will decompress the "
                          "message, assign offsets using relative offsets, fill in the time field with -1 if "
                          "message.timestamp.type=CreateTime or current server time if "
                          "message.timestamp.type=LogAppendTime and re-compress the message. i.e. up-convert the "
                          "message format to MessageAndOffset V1."),
    "000.p2.2.2": ("000", "When broker sees a producer request V2 (MessageAndOffset = V1), it will decompress the "
                          "message, assign offsets using relative offsets, check and maybe overwrite the time field, "
                          "and NOT do re-compression."),
    "000.p2.2.3": ("000", "When broker sees a fetch request V1 (Supporting MessageAndOffset = V0), because the data "
                          "format on disk is MessageAndOffset V1, it will NOT use the zero-copy transfer. Instead the "
                          "broker will read the message from disk, down-convert them to V0 and reply using fetch "
                          "response V1 with MessageAndOffset V0."),
    "000.p2.2.4": ("000", "When broker sees a fetch request V2 (Supporting MessageAndOffset = V0, V1), because the data "
                          "format on disk is MessageAndOffset V1, it will use zero-copy transfer to reply with fetch "
                          "response V2 with MessageAndOffset V1."),
    "000.t.1": ("000", "Set message.format.version=1 0.10.0 on one of the brokers (broker B)."),
    "000.t.2": ("000", "Broker B will start to act like what described in phase 2."),
    "000.t.2.1": ("000", "It will sends FetchRequest V2 to other brokers for replication."),
    "000.t.2.2": ("000", "It will only see ProduceRequest/FetchRequest V1 from other brokers and clietns."),
    "000.t.3": ("000", "If something goes wrong, we can do the following to rollback:"),
    "000.t.3.1": ("000", "shutdown broker B"),
    "000.t.3.2": ("000", "nuke the data of the topics it was serving as leader before shutdown"),
    "000.t.3.3": ("000", "set message.format.version=0.9.0"),
    "000.t.3.4": ("000", "restart the broker to let the broker replicate from leaders. At this point the data on disk "
                         "will be in MessageAndOffset V0."),
    # seed 002, KIP-228
    "002.order": ("002", "they should update their infrastructure in that order: Broker, Consumers, Producers."),
    "002.producers": ("002", "So broker should be updated first, before producers."),
    "002.consumers": ("002", "So only new consumers will read records correctly"),
    "002.convert": ("002", "Broker should convert old NO_TIMESTAMP=−1L to new NO_TIMESTAMP_EXTENDED=Long.MIN_VALUE."),
    "002.bit": ("002", "That isTimestampExtended bit should be 1 for all new records."),
    # seed 003, idempotence modes
    "003.background": ("003", "if we enable idempotence, any produce requests to topics with an older message format "
                              "will fail with an UnsupportedVersionException."),
    "003.path": ("003", "the recommended upgrade path is to upgrade broker code while keeping the message format at "
                        "the older version, then upgrade all clients, and only finally upgrade the message format on "
                        "the server."),
    "003.untenable": ("003", "the middle step is actually untenable if we enable idempotence as the default."),
    "003.safe": ("003", "the 1.0.0 broker will automatically downgrade messages sent in safe mode from the 0.11.0 "
                        "message format if the topic being written to is configured to use an older message format "
                        "version. In required mode, the broker would raise an error."),
    "003.downside": ("003", "One potential downside here is the extra work to convert messages when the format of the "
                            "client and broker is mismatched."),
    "003.old_broker": ("003", "if a 1.0.0 client with enable.idempotence=safe is writing to an 0.11.0 broker, "
                              "idempotence will be disabled."),
    "003.booleans": ("003", "a 1.0.0 producer would interpret enable.idempotence=true as enable.idempotence=required and "
                            "enable.idempotence=false as enable.idempotence=off."),
    # seed 004, KIP-31
    "004.plan.1": ("004", "Increment magic byte in MessageAndOffset from 0 to 1."),
    "004.plan.2": ("004", "Upgrade broker to support both V0 and V1 of ProducerRequest and FetchRequest V2 which uses "
                          "magic byte 1 for MessageAndOffset."),
    "004.plan.2.1": ("004", "it will still decompress the message, assign offsets using relative offsets and "
                            "re-compress the message."),
    "004.plan.2.2": ("004", "it will decompress the message for verification, assign the offset to outer message and "
                            "NOT do recompression."),
    "004.plan.2.3": ("004", "it will no use the zero-copy transfer, but read the message to memory, do "
                            "down-conversion, then send fetch response V1."),
    "004.plan.2.4": ("004", "it will use zero-copy transfer to reply with fetch response V2."),
    "004.plan.3": ("004", "Upgrade consumer to support both V0 and V1."),
    "004.plan.4": ("004", "Upgrade producer to send MessageAndOffset V1."),
    "004.old_consumers": ("004", "For old consumers that cannot recognize V1, if they see the new protocol an exception "
                                 "will be thrown for unsupported version."),
    "004.penalty": ("004", "there will be some performance penalty because there is no zero-copy transfer."),
    "004.equal": ("004", "if the FetchRequest version is equal to message.format.version, the broker will use "
                         "zero-copy transfer to send message"),
}


def quote(key: str) -> str:
    """``seed NNN: "sentence"`` for a quote id."""
    seed, text = QUOTES[key]
    return f'seed {seed}: "{text}"'
