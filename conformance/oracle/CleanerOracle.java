// kafkafmt cleaner oracle: one log-cleaner-thread iteration of Apache Kafka 3.9's LogCleaner over a copy of a
// partition directory, driven by a mock clock, so kafkafmt.log.cleaner can be compared with it file for file.
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only *calls* classes of the
// jars that `make oracle` fetches into conformance/.cache/lib (kafka_2.13, kafka-storage, kafka-clients,
// kafka-server-common 3.9.2). kafkarig.cleaner_oracle starts it; the line protocol is
// oracle-shared/JsonLines.java, the request helpers oracle-shared/CleanerRequests.java.
//
// Protocol: one JSON request per line on stdin, one JSON response per line on stdout.
//   {"op": "ping"}
//   {"op": "clean", "dir": "<log dir>/<topic>-<partition>", "now": <ms>, "config": {topic props},
//    "cleaner": {"numThreads", "dedupeBufferSize", "loadFactor", "ioBufferSize", "maxMessageSize"},
//    "logStartOffset": <n>, "highWatermark": <n, default the log end>}
//     -> opens the partition as UnifiedLog (clean shutdown), sets the high watermark to the log end,
//        builds `new LogCleaner(config, [log dir], {tp -> log}, channel, time)` and runs one
//        `CleanerThread.cleanFilthiestLog()` (reflection: it is private), then closes the log.
//        The cleaner writes `cleaner-offset-checkpoint` into the log dir, as a broker's does.
//     <- {"ok": true, "cleaned": bool, "logStartOffset", "logEndOffset", "segments": [baseOffset...],
//         "cleanNanos", "cleanCpuNanos": the wall time and the calling thread's CPU time of the
//         cleanFilthiestLog call alone (benchmarks/cleaner.py), "scheduled": [{"name", "dueMs"}...]: the
//         one-shot tasks still waiting (below)}
//   {"op": "runScheduled", "now": <ms>}
//     -> runs the last clean's waiting tasks due at `now`, in due order, on the calling thread
//     <- {"ok": true, "ran": [name...], "scheduled": [{"name", "dueMs"}...] (still waiting)}
// The scheduler runs one-shot tasks due at once (delay <= 0) on the calling thread; a later one (the
// deletion of segment files renamed .deleted, after file.delete.delay.ms: LocalLog.deleteSegmentFiles with
// asyncDelete) waits for runScheduled, so the directory after a clean is what a broker's holds before its
// scheduler fires.  Each clean drops the tasks the previous one left.  Periodic tasks never run.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kafka.log.LogCleaner;
import kafka.log.UnifiedLog;
import kafka.log.UnifiedLog$;
import kafka.server.BrokerTopicStats;
import kafka.utils.Pool;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.storage.internals.log.CleanerConfig;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.Iterator;
import java.util.concurrent.ConcurrentHashMap;

public final class CleanerOracle {
    public static void main(String[] args) throws Exception {
        JsonLines.silenceLog4j();
        JsonLines.serve(CleanerOracle::serve);
    }

    static ObjectNode serve(JsonNode req) throws Exception {
        String op = req.get("op").asText();
        ObjectNode out = JsonLines.NODES.objectNode();
        switch (op) {
            case "ping":
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

    static ObjectNode clean(JsonNode req, ObjectNode out) throws Exception {
        CleanerClock.MutableTime time = new CleanerClock.MutableTime(req.get("now").asLong());
        CleanerClock.InlineScheduler.PENDING.clear();
        File dir = new File(req.get("dir").asText()).getAbsoluteFile();
        File logDir = dir.getParentFile();
        CleanerConfig cleanerConfig = CleanerRequests.cleanerConfig(req.path("cleaner"));
        UnifiedLog log = UnifiedLog$.MODULE$.apply(
            dir, new LogConfig(JsonLines.props(req.get("config"))),
            req.path("logStartOffset").asLong(0), req.path("recoveryPoint").asLong(0),
            new CleanerClock.InlineScheduler(time), new BrokerTopicStats(false), time, 60000,
            new ProducerStateManagerConfig(86400000, false), 600000, new LogDirFailureChannel(1),
            true, scala.Option.empty(), false,
            new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        boolean cleaned;
        try {
            log.updateHighWatermark(req.has("highWatermark") ? req.get("highWatermark").asLong() : log.logEndOffset());
            Pool<TopicPartition, UnifiedLog> pool = new Pool<>(scala.Option.empty());
            pool.put(log.topicPartition(), log);
            scala.collection.immutable.Seq<File> dirs =
                scala.jdk.javaapi.CollectionConverters.asScala(Collections.singletonList(logDir)).toSeq();
            LogCleaner cleaner = new LogCleaner(cleanerConfig, dirs, pool, new LogDirFailureChannel(1), time);
            Class<?> threadClass = Class.forName("kafka.log.LogCleaner$CleanerThread");
            Constructor<?> ctor = threadClass.getDeclaredConstructor(LogCleaner.class, int.class);
            ctor.setAccessible(true);
            Object thread = ctor.newInstance(cleaner, 0);
            Method step = null;
            for (Method m : threadClass.getDeclaredMethods()) {
                if (m.getName().endsWith("cleanFilthiestLog") && m.getParameterCount() == 0) step = m;
            }
            if (step == null) throw new IllegalStateException("CleanerThread.cleanFilthiestLog not found");
            step.setAccessible(true);
            java.lang.management.ThreadMXBean cpu = java.lang.management.ManagementFactory.getThreadMXBean();
            long c0 = cpu.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            cleaned = (Boolean) step.invoke(thread);
            out.put("cleanNanos", System.nanoTime() - t0);
            out.put("cleanCpuNanos", cpu.getCurrentThreadCpuTime() - c0);
            out.put("cleaned", cleaned);
            out.put("logStartOffset", log.logStartOffset());
            out.put("logEndOffset", log.logEndOffset());
            ArrayNode segs = out.putArray("segments");
            Iterator<LogSegment> it = log.logSegments().iterator();
            while (it.hasNext()) segs.add(it.next().baseOffset());
        } finally {
            log.close();
        }
        CleanerClock.InlineScheduler.listPending(out);
        return out;
    }

    /** Opens the directory as a broker restarting after a crash would (LogLoader, no clean shutdown) and lists
     *  every record: [offset, key hex, value hex]. */
    static ObjectNode records(JsonNode req, ObjectNode out) throws Exception {
        CleanerClock.MutableTime time = new CleanerClock.MutableTime(req.get("now").asLong());
        UnifiedLog log = UnifiedLog$.MODULE$.apply(
            new File(req.get("dir").asText()).getAbsoluteFile(), new LogConfig(JsonLines.props(req.get("config"))),
            req.path("logStartOffset").asLong(0), req.path("recoveryPoint").asLong(0),
            new CleanerClock.InlineScheduler(time), new BrokerTopicStats(false), time, 60000,
            new ProducerStateManagerConfig(86400000, false), 600000, new LogDirFailureChannel(1),
            req.path("clean").asBoolean(false), scala.Option.empty(), false,
            new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
        try {
            ArrayNode recs = out.putArray("records");
            Iterator<LogSegment> it = log.logSegments().iterator();
            while (it.hasNext()) {
                for (org.apache.kafka.common.record.RecordBatch b : it.next().log().batches()) {
                    for (org.apache.kafka.common.record.Record r : b) {
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
