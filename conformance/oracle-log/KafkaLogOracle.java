// kafkafmt log oracle: a line-oriented JSON driver around Apache Kafka 3.9's UnifiedLog, LogSegment and
// kafka-dump-log (kafka.tools.DumpLogSegments), used by tests/log/ to compare kafkafmt.log with the real
// thing file for file.
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only *calls* public classes
// of the jars that `make oracle` fetches into conformance/.cache/lib. kafkarig.log_oracle compiles
// it on first use.
//
// Protocol (oracle-shared/JsonLines.java): one JSON request per line on stdin, one JSON response per line on stdout.
//   request : {"op": "...", ...}      response: {"ok": true, ...} | {"ok": false, "error": "...", "message": "..."}
// Bytes travel as lowercase hex. Time is a mock clock set with {"op": "time", "ms": N}; every scheduled task
// (segment deletion, flushes) runs at once on the calling thread, so results do not depend on timing.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kafka.log.UnifiedLog;
import kafka.log.UnifiedLog$;
import kafka.server.BrokerTopicStats;
import kafka.server.RequestLocal$;
import kafka.tools.DumpLogSegments;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.Exit;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.util.Scheduler;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.FetchDataInfo;
import org.apache.kafka.storage.internals.log.FetchIsolation;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.VerificationGuard;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;

public final class KafkaLogOracle {
    private static final CleanerClock.MutableTime TIME = new CleanerClock.MutableTime(0);
    private static final Scheduler SCHEDULER = new InlineScheduler();
    private static final Map<String, UnifiedLog> LOGS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        JsonLines.silenceLog4j();
        Exit.setExitProcedure((code, message) -> {
            throw new ToolExit(code, message);
        });
        JsonLines.serve(KafkaLogOracle::serve);
    }

    static final class ToolExit extends RuntimeException {
        ToolExit(int code, String message) {
            super("exit " + code + ": " + message);
        }
    }

    static ObjectNode serve(JsonNode req) throws Exception {
        String op = req.get("op").asText();
        ObjectNode out = JsonLines.NODES.objectNode();
        switch (op) {
            case "ping":
                return out;
            case "time":
                TIME.ms = req.get("ms").asLong();
                return out;
            case "open": {
                Properties props = JsonLines.props(req.get("config"));
                UnifiedLog log = UnifiedLog$.MODULE$.apply(
                    new File(req.get("dir").asText()), new LogConfig(props),
                    req.path("logStartOffset").asLong(0), req.path("recoveryPoint").asLong(0),
                    SCHEDULER, new BrokerTopicStats(false), TIME, 60000,
                    new ProducerStateManagerConfig(86400000, false), 600000, new LogDirFailureChannel(1),
                    req.path("clean").asBoolean(true), scala.Option.empty(), false,
                    new ConcurrentHashMap<>(), false, LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
                LOGS.put(req.get("log").asText(), log);
                return state(log, out);
            }
            case "appendLeader": {
                UnifiedLog log = log(req);
                LogAppendInfo info = log.appendAsLeader(records(req), req.path("epoch").asInt(0),
                    AppendOrigin.valueOf(req.path("origin").asText("CLIENT")), MetadataVersion.latestProduction(),
                    RequestLocal$.MODULE$.NoCaching(), VerificationGuard.SENTINEL);
                return appendInfo(info, out);
            }
            case "appendFollower": {
                LogAppendInfo info = log(req).appendAsFollower(records(req), req.path("epoch").asInt(0));
                return appendInfo(info, out);
            }
            case "roll": {
                LogSegment seg = log(req).roll(scala.Option.empty());
                out.put("baseOffset", seg.baseOffset());
                return out;
            }
            case "deleteOldSegments":
                out.put("deleted", log(req).deleteOldSegments());
                return state(log(req), out);
            case "fetchOffsetByTimestamp": {
                scala.Option<FileRecords.TimestampAndOffset> r =
                    log(req).fetchOffsetByTimestamp(req.get("timestamp").asLong(), scala.Option.empty());
                if (r.isEmpty()) {
                    out.putNull("result");
                } else {
                    FileRecords.TimestampAndOffset t = r.get();
                    ObjectNode o = out.putObject("result");
                    o.put("timestamp", t.timestamp);
                    o.put("offset", t.offset);
                    if (t.leaderEpoch.isPresent()) o.put("leaderEpoch", t.leaderEpoch.get());
                    else o.putNull("leaderEpoch");
                }
                return out;
            }
            case "truncateTo":
                out.put("truncated", log(req).truncateTo(req.get("offset").asLong()));
                return state(log(req), out);
            case "updateHighWatermark":
                out.put("hw", log(req).updateHighWatermark(req.get("hw").asLong()));
                return out;
            case "maybeIncrementLogStartOffset":
                out.put("changed", log(req).maybeIncrementLogStartOffset(req.get("offset").asLong(),
                    org.apache.kafka.storage.internals.log.LogStartOffsetIncrementReason.ClientRecordDeletion));
                return state(log(req), out);
            case "read": {
                FetchDataInfo info = log(req).read(req.get("offset").asLong(), req.get("maxLength").asInt(),
                    FetchIsolation.valueOf(req.path("isolation").asText("HIGH_WATERMARK")),
                    req.path("minOneMessage").asBoolean(true));
                out.put("records", JsonLines.hex(bytesOf(info.records)));
                out.put("messageOffset", info.fetchOffsetMetadata.messageOffset);
                out.put("segmentBaseOffset", info.fetchOffsetMetadata.segmentBaseOffset);
                out.put("relativePositionInSegment", info.fetchOffsetMetadata.relativePositionInSegment);
                out.put("firstEntryIncomplete", info.firstEntryIncomplete);
                return out;
            }
            case "state":
                return state(log(req), out);
            case "close":
                log(req).close();
                LOGS.remove(req.get("log").asText());
                return out;
            case "closeHandlers":
                log(req).closeHandlers();
                LOGS.remove(req.get("log").asText());
                return out;
            case "recoverSegment": {
                Properties props = JsonLines.props(req.get("config"));
                LogConfig config = new LogConfig(props);
                File dir = new File(req.get("dir").asText());
                LogSegment seg = LogSegment.open(dir, req.get("baseOffset").asLong(), config, TIME, true, 0, false, "");
                ProducerStateManager psm = new ProducerStateManager(new TopicPartition("t", 0), dir, 60000,
                    new ProducerStateManagerConfig(86400000, false), TIME);
                out.put("truncated", seg.recover(psm, Optional.empty()));
                out.put("nextOffset", seg.readNextOffset());
                out.put("maxTimestampSoFar", seg.maxTimestampSoFar());
                seg.close();
                return out;
            }
            case "dump": {
                ByteArrayOutputStream o = new ByteArrayOutputStream();
                ByteArrayOutputStream e = new ByteArrayOutputStream();
                PrintStream oldOut = System.out;
                PrintStream oldErr = System.err;
                System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
                System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
                String exception = null;
                try {
                    JsonNode a = req.get("args");
                    String[] args = new String[a.size()];
                    for (int i = 0; i < args.length; i++) args[i] = a.get(i).asText();
                    // Scala's println goes to Console.out, bound once to the System.out of its first use
                    PrintStream capture = System.out;
                    scala.Console$.MODULE$.withOut(capture, new scala.runtime.AbstractFunction0<Object>() {
                        @Override public Object apply() {
                            DumpLogSegments.main(args);
                            return null;
                        }
                    });
                } catch (Throwable t) {
                    exception = t.getClass().getName() + ": " + t.getMessage();
                } finally {
                    System.out.flush();
                    System.err.flush();
                    System.setOut(oldOut);
                    System.setErr(oldErr);
                }
                out.put("stdout", o.toString(StandardCharsets.UTF_8));
                out.put("stderr", e.toString(StandardCharsets.UTF_8));
                if (exception == null) out.putNull("exception");
                else out.put("exception", exception);
                return out;
            }
            case "updateConfig": {
                // what `kafka-configs --alter` ends in: UnifiedLog.updateConfig(new LogConfig(props))
                Properties props = JsonLines.props(req.get("config"));
                log(req).updateConfig(new LogConfig(props));
                return state(log(req), out);
            }
            case "configKeys": {
                // every topic setting Kafka knows: name, type, default (as Kafka prints it), validator
                ArrayNode keys = out.putArray("keys");
                for (java.util.Map.Entry<String, org.apache.kafka.common.config.ConfigDef.ConfigKey> e
                        : LogConfig.configKeys().entrySet()) {
                    org.apache.kafka.common.config.ConfigDef.ConfigKey k = e.getValue();
                    ObjectNode o = keys.addObject();
                    o.put("name", e.getKey());
                    o.put("type", k.type.toString());
                    if (k.hasDefault() && k.defaultValue != null)
                        o.put("default", org.apache.kafka.common.config.ConfigDef.convertToString(k.defaultValue, k.type));
                    else o.putNull("default");
                    o.put("validator", k.validator == null ? null : k.validator.toString());
                    java.util.Optional<String> server = LogConfig.serverConfigName(e.getKey());
                    o.put("serverName", server.orElse(null));
                }
                return out;
            }
            case "validateConfig": {
                // LogConfig.validate(props) as the admin path runs it; the effective values when valid
                Properties props = JsonLines.props(req.get("config"));
                LogConfig.validate(props);
                LogConfig c = new LogConfig(props);
                out.put("recordVersion", c.recordVersion().value);
                out.put("messageTimestampType", c.messageTimestampType.name);
                out.put("messageTimestampBeforeMaxMs", c.messageTimestampBeforeMaxMs);
                out.put("messageTimestampAfterMaxMs", c.messageTimestampAfterMaxMs);
                out.put("maxSegmentMs", c.maxSegmentMs());
                out.put("initFileSize", c.initFileSize());
                out.put("compact", c.compact);
                out.put("delete", c.delete);
                return out;
            }
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    static UnifiedLog log(JsonNode req) {
        UnifiedLog log = LOGS.get(req.get("log").asText());
        if (log == null) throw new IllegalArgumentException("no open log " + req.get("log").asText());
        return log;
    }

    static MemoryRecords records(JsonNode req) {
        return MemoryRecords.readableRecords(ByteBuffer.wrap(JsonLines.unhex(req.get("records").asText())));
    }

    static ObjectNode appendInfo(LogAppendInfo info, ObjectNode out) {
        return LogAnswers.appendInfo(info, out);
    }

    static ObjectNode state(UnifiedLog log, ObjectNode out) {
        return LogAnswers.state(log.logEndOffset(), log.logStartOffset(), log.recoveryPoint(), log.highWatermark(),
                                log.logSegments(), out);
    }

    static byte[] bytesOf(Records records) throws Exception {
        if (records instanceof MemoryRecords) {
            ByteBuffer b = ((MemoryRecords) records).buffer().duplicate();
            byte[] a = new byte[b.remaining()];
            b.get(a);
            return a;
        }
        FileRecords fr = (FileRecords) records;
        ByteBuffer b = ByteBuffer.allocate(fr.sizeInBytes());
        fr.readInto(b, 0);
        byte[] a = new byte[b.remaining()];
        b.get(a);
        return a;
    }

    /** Runs one-shot tasks at once on the caller's thread, whatever their delay (the cleaner oracles'
     *  CleanerClock.InlineScheduler keeps delayed ones pending instead); periodic tasks never run. */
    static final class InlineScheduler implements Scheduler {
        @Override public void startup() { }
        @Override public void shutdown() { }
        @Override public void resizeThreadPool(int newSize) { }
        @Override public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (periodMs <= 0) task.run();
            return new CleanerClock.Done();
        }
    }
}
