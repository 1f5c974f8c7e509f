// kafkafmt cleaner oracle for the Kafka 4.4 line: one log-cleaner-thread iteration of Apache Kafka 4.4.0's
// LogCleaner (org.apache.kafka.storage.internals.log, moved from kafka.log to the storage module in 4.x) over a
// copy of a partition directory, driven by a mock clock, so kafkafmt.log.cleaner on line 4.4 can be compared
// with it file for file.  The 3.9.2 twin is conformance/oracle/CleanerOracle.java.
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only *calls* classes of the
// jars that `make oracle-4.4` fetches into conformance/.cache/lib-4.4. kafkarig.cleaner_oracle44
// starts it; the line protocol is oracle-shared/JsonLines.java, the request helpers oracle-shared/CleanerRequests.java.
//
// Protocol: one JSON request per line on stdin, one JSON response per line on stdout.
//   {"op": "ping"}  <- {"ok": true, "kafkaVersion": "4.4.0"}
//   {"op": "clean", "dir": "<log dir>/<topic>-<partition>", "now": <ms>, "config": {topic props},
//    "cleaner": {"numThreads", "dedupeBufferSize", "loadFactor", "ioBufferSize", "maxMessageSize"},
//    "logStartOffset": <n>, "highWatermark": <n, default the log end>}
//     -> opens the partition with UnifiedLog.create (clean shutdown), sets the high watermark, builds
//        `new LogCleaner(config, [log dir], {tp -> log}, channel, time)` and runs one
//        `CleanerThread.cleanFilthiestLog()` (reflection: it is private), then closes the log.
//        The cleaner writes `cleaner-offset-checkpoint` into the log dir, as a broker's does.
//     <- {"ok": true, "cleaned": bool, "logStartOffset", "logEndOffset", "segments": [baseOffset...]}
//        Before closing, the active segment's indexes are trimmed as a broker's clean shutdown leaves them.
//        "scheduled": [{"name", "dueMs"}...]: the one-shot tasks waiting (files left .deleted for
//        file.delete.delay.ms), as in CleanerOracle.java.
//   {"op": "records", "dir", "now", "config"}: Kafka 4.4's loader after a crash, every record
//     as [offset, key hex, value hex], with each batch's magic in "magics".
//   {"op": "runScheduled", "now": <ms>}: as CleanerOracle.java (3.9.2) -- the last clean's deferred deletions.
// Scheduled one-shot tasks due at once run on the calling thread; later ones (the asynchronous deletion of
// segment files renamed .deleted) wait for runScheduled; periodic tasks never run.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.storage.internals.log.CleanerConfig;
import org.apache.kafka.storage.internals.log.LogCleaner;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.File;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

public final class CleanerOracle44 {
    public static void main(String[] args) throws Exception {
        JsonLines.serve(CleanerOracle44::serve);
    }

    static ObjectNode serve(JsonNode req) throws Exception {
        String op = req.get("op").asText();
        ObjectNode out = JsonLines.NODES.objectNode();
        switch (op) {
            case "ping":
                out.put("kafkaVersion", org.apache.kafka.common.utils.internals.AppInfoParser.getVersion());
                return out;
            case "clean":
                return clean(req, out);
            case "records":
                return records(req, out);
            case "runScheduled":
                return CleanerClock.InlineScheduler.runDue(req.get("now").asLong(), out);
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    static UnifiedLog open(JsonNode req, Time time, boolean clean) throws Exception {
        return UnifiedLog.create(
            new File(req.get("dir").asText()).getAbsoluteFile(), new LogConfig(JsonLines.config(req.get("config"))),
            req.path("logStartOffset").asLong(0), req.path("recoveryPoint").asLong(0),
            new CleanerClock.InlineScheduler(time), new BrokerTopicStats(false), time, 60000,
            new ProducerStateManagerConfig(86400000, false), 600000, new LogDirFailureChannel(1),
            clean, Optional.empty(), new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
    }

    static ObjectNode clean(JsonNode req, ObjectNode out) throws Exception {
        CleanerClock.MutableTime time = new CleanerClock.MutableTime(req.get("now").asLong());
        CleanerClock.InlineScheduler.PENDING.clear();
        File logDir = new File(req.get("dir").asText()).getAbsoluteFile().getParentFile();
        CleanerConfig cleanerConfig = CleanerRequests.cleanerConfig(req.path("cleaner"));
        UnifiedLog log = open(req, time, true);
        try {
            log.updateHighWatermark(req.has("highWatermark") ? req.get("highWatermark").asLong() : log.logEndOffset());
            ConcurrentMap<TopicPartition, UnifiedLog> pool = new ConcurrentHashMap<>();
            pool.put(log.topicPartition(), log);
            LogCleaner cleaner = new LogCleaner(cleanerConfig, List.of(logDir), pool, new LogDirFailureChannel(1), time);
            LogCleaner.CleanerThread thread = cleaner.new CleanerThread(0);
            Method step = LogCleaner.CleanerThread.class.getDeclaredMethod("cleanFilthiestLog");
            step.setAccessible(true);
            out.put("cleaned", (Boolean) step.invoke(thread));
            out.put("logStartOffset", log.logStartOffset());
            out.put("logEndOffset", log.logEndOffset());
            ArrayNode segs = out.putArray("segments");
            for (LogSegment s : log.logSegments()) segs.add(s.baseOffset());
            // a bare UnifiedLog.close() in 4.4.0 leaves the active segment's indexes at their preallocated size;
            // a broker's clean shutdown leaves them trimmed, with the final time index entry
            log.activeSegment().onBecomeInactiveSegment();
        } finally {
            log.close();
        }
        CleanerClock.InlineScheduler.listPending(out);
        return out;
    }

    /** Opens the directory as a broker restarting after a crash would (no clean shutdown) and lists every record. */
    static ObjectNode records(JsonNode req, ObjectNode out) throws Exception {
        UnifiedLog log = open(req, new CleanerClock.MutableTime(req.get("now").asLong()),
                              req.path("clean").asBoolean(false));
        try {
            ArrayNode recs = out.putArray("records");
            ArrayNode magics = out.putArray("magics");
            for (LogSegment s : log.logSegments()) {
                for (RecordBatch b : s.log().batches()) {
                    magics.add(b.magic());
                    for (Record r : b) {
                        CleanerRequests.recordRow(recs, r.offset(), r.hasKey() ? r.key() : null,
                                                  r.hasValue() ? r.value() : null);
                    }
                }
            }
            out.put("logStartOffset", log.logStartOffset());
            out.put("logEndOffset", log.logEndOffset());
        } finally {
            log.close();
        }
        return out;
    }
}
