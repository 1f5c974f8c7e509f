/*
 * What the log oracles answer about a UnifiedLog, the same in both lines (KafkaLogOracle on Kafka 3.9.2's jars,
 * KafkaOracle44 on 4.4.0's): an append's LogAppendInfo and the log's offsets and segments.  LogAppendInfo and
 * LogSegment are the same classes in both (org.apache.kafka.storage.internals.log); UnifiedLog moved
 * (kafka.log in 3.9, the storage module in 4.x), so each oracle passes its log's values.
 *
 * This file is original kafkafmt code; it only calls classes of Kafka's jars.
 */
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogSegment;

final class LogAnswers {
    private LogAnswers() { }

    static ObjectNode appendInfo(LogAppendInfo info, ObjectNode out) {
        out.put("firstOffset", info.firstOffset());
        out.put("lastOffset", info.lastOffset());
        out.put("maxTimestamp", info.maxTimestamp());
        out.put("logAppendTime", info.logAppendTime());
        out.put("validBytes", info.validBytes());
        return out;
    }

    /** The log's offsets and each segment's base offset and size (nothing that would open, and so create, a
     *  lazily opened index file). */
    static ObjectNode state(long logEndOffset, long logStartOffset, long recoveryPoint, long highWatermark,
                            Iterable<LogSegment> segments, ObjectNode out) {
        out.put("logEndOffset", logEndOffset);
        out.put("logStartOffset", logStartOffset);
        out.put("recoveryPoint", recoveryPoint);
        out.put("highWatermark", highWatermark);
        ArrayNode segs = out.putArray("segments");
        for (LogSegment s : segments) {
            ObjectNode o = segs.addObject();
            o.put("baseOffset", s.baseOffset());
            o.put("size", s.size());
        }
        return out;
    }
}
