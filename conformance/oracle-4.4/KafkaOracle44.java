// kafkafmt conformance oracle for the Kafka 4.4 line: a line-oriented JSON driver around Apache Kafka
// 4.4.0's released jars (conformance/.cache/lib-4.4, a class path apart from 3.9.2's).
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only *calls* public classes
// of the 4.4.0 jars. 4.x moved the record classes to org.apache.kafka.common.record.internal and dropped
// message formats v0/v1 on write (KIP-724), so the 3.9 driver (conformance/oracle/KafkaOracle.java) does
// not compile here; this one offers the same operations where 4.4 still has them.
//
// Protocol (as KafkaOracle.java): one JSON object per line on stdin, one per line on stdout.
//   {"op": "ping"}                          -> kafkaVersion
//   {"op": "validate", "bytes": hex, ...}   -> LogValidator.validateMessagesAndAssignOffsets (toMagic 2)
//   {"op": "configKeys"}                    -> LogConfig.configKeys(): name, type, default, validator
//   {"op": "validateConfig", "config": {}}  -> LogConfig.validate(props) and the effective values
//   {"op": "dump", "args": [...]}           -> org.apache.kafka.tools.DumpLogSegments.main: stdout, stderr
//   {"op": "time", "ms": N}                 -> sets the mock clock of the UnifiedLog ops
//   {"op": "open", "log": name, "dir": path, "config": {...}}  -> UnifiedLog.create (inline scheduler)
//   {"op": "appendLeader"|"appendFollower", "log": name, "records": hex, "epoch": E, "origin": O}
//   {"op": "roll"|"state"|"flush"|"close"|"updateHighWatermark", "log": name}
// Errors: {"ok": false, "error": simple class name, "message": ...}.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.common.utils.internals.PrimitiveRef;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogValidator;
import org.apache.kafka.storage.internals.log.RecordValidationException;
import org.apache.kafka.storage.internals.log.RecordValidationStats;
import org.apache.kafka.tools.DumpLogSegments;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.io.File;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

public final class KafkaOracle44 {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static PrintStream stdout;

    /** A fixed clock: LogValidator reads time.milliseconds() as "now". */
    static final class FixedTime implements Time {
        final long ms;

        FixedTime(long ms) {
            this.ms = ms;
        }

        public long milliseconds() {
            return ms;
        }

        public long nanoseconds() {
            return TimeUnit.MILLISECONDS.toNanos(ms);
        }

        public void sleep(long ms) {
        }

        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException();
        }
    }

    static final class Exited extends RuntimeException {
        final int status;

        Exited(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    static final class Counting implements LogValidator.MetricsRecorder {
        int invalidMagic, invalidOffset, invalidSequence, invalidChecksums, noKeyCompactedTopic;

        public void recordInvalidMagic() { invalidMagic++; }
        public void recordInvalidOffset() { invalidOffset++; }
        public void recordInvalidSequence() { invalidSequence++; }
        public void recordInvalidChecksums() { invalidChecksums++; }
        public void recordNoKeyCompactedTopic() { noKeyCompactedTopic++; }

        ObjectNode json() {
            ObjectNode n = NODES.objectNode();
            n.put("invalidMagic", invalidMagic);
            n.put("invalidOffset", invalidOffset);
            n.put("invalidSequence", invalidSequence);
            n.put("invalidChecksums", invalidChecksums);
            n.put("noKeyCompactedTopic", noKeyCompactedTopic);
            return n;
        }
    }

    public static void main(String[] args) throws Exception {
        stdout = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        Exit.setExitProcedure((status, message) -> { throw new Exited(status); });
        Exit.setHaltProcedure((status, message) -> { throw new Exited(status); });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode out;
            JsonNode id = null;
            try {
                JsonNode req = JSON.readTree(line);
                id = req.get("id");
                out = NODES.objectNode();
                out.put("ok", true);
                serve(req, out);
            } catch (Reported r) {
                out = r.response;
            } catch (Throwable t) {
                out = error(t);
            }
            if (id != null) out.set("id", id);
            stdout.print(JSON.writeValueAsString(out));
            stdout.print('\n');
            stdout.flush();
        }
    }

    static void serve(JsonNode req, ObjectNode out) throws Exception {
        String op = req.path("op").asText("");
        switch (op) {
            case "ping":
                out.put("kafkaVersion", AppInfoParser.getVersion());
                out.put("javaVersion", System.getProperty("java.version"));
                break;
            case "validate": validate(req, out); break;
            case "configKeys": configKeys(out); break;
            case "validateConfig": validateConfig(req, out); break;
            case "dump": dump(req, out); break;
            case "time": TIME.ms = req.path("ms").asLong(); break;
            case "open": openLog(req, out); break;
            case "appendLeader": appendInfo(log(req).appendAsLeader(records(req), req.path("epoch").asInt(0),
                    AppendOrigin.valueOf(req.path("origin").asText("CLIENT"))), out); break;
            case "appendFollower": appendInfo(log(req).appendAsFollower(records(req), req.path("epoch").asInt(0)), out);
                break;
            case "roll": out.put("baseOffset", log(req).roll().baseOffset()); break;
            case "updateHighWatermark": out.put("hw", log(req).updateHighWatermark(req.path("hw").asLong())); break;
            case "state": state(log(req), out); break;
            case "flush": log(req).flush(req.path("forceFlushActiveSegment").asBoolean(true)); break;
            case "close": log(req).close(); LOGS.remove(req.path("log").asText()); break;
            default: throw new IllegalArgumentException("unknown op '" + op + "'");
        }
    }

    static ObjectNode error(Throwable t) {
        ObjectNode out = NODES.objectNode();
        out.put("ok", false);
        out.put("error", t.getClass().getSimpleName());
        out.put("message", t.getMessage());
        out.put("exceptionClass", t.getClass().getName());
        if (t instanceof RecordValidationException) {
            RecordValidationException rve = (RecordValidationException) t;
            if (rve.invalidException() != null) {
                out.put("invalidException", rve.invalidException().getClass().getSimpleName());
                out.put("invalidExceptionMessage", rve.invalidException().getMessage());
            }
            ArrayNode errors = out.putArray("recordErrors");
            for (ProduceResponse.RecordError e : rve.recordErrors()) {
                ObjectNode n = errors.addObject();
                n.put("batchIndex", e.batchIndex);
                n.put("message", e.message);
            }
        }
        return out;
    }

    static final class Reported extends RuntimeException {
        final ObjectNode response;

        Reported(ObjectNode response) {
            super(response.path("message").asText(), null, false, false);
            this.response = response;
        }
    }

    static void validate(JsonNode req, ObjectNode out) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(JsonLines.unhex(req.path("bytes").asText())));
        long now = req.path("now").asLong(0L);
        String source = req.path("sourceCompression").asText("none");
        String target = req.path("targetCompression").asText(source);
        Counting recorder = new Counting();
        LogValidator validator = new LogValidator(
                records,
                new TopicPartition(req.path("topic").asText("topic"), req.path("partition").asInt(0)),
                new FixedTime(now),
                CompressionType.forName(source),
                compression(target, req.get("targetLevel")),
                req.path("compactedTopic").asBoolean(false),
                (byte) req.path("toMagic").asInt(RecordBatch.CURRENT_MAGIC_VALUE),
                TimestampType.forName(req.path("timestampType").asText("CreateTime")),
                req.path("timestampBeforeMaxMs").asLong(Long.MAX_VALUE),
                req.path("timestampAfterMaxMs").asLong(Long.MAX_VALUE),
                req.path("partitionLeaderEpoch").asInt(RecordBatch.NO_PARTITION_LEADER_EPOCH),
                AppendOrigin.valueOf(req.path("origin").asText("CLIENT")));
        PrimitiveRef.LongRef offset = PrimitiveRef.ofLong(req.path("offset").asLong(0L));
        LogValidator.ValidationResult result;
        try (BufferSupplier supplier = BufferSupplier.create()) {
            result = validator.validateMessagesAndAssignOffsets(offset, recorder, supplier);
        } catch (Throwable t) {
            ObjectNode err = error(t);
            err.set("metrics", recorder.json());
            err.put("nextOffset", offset.value);
            throw new Reported(err);
        }
        out.put("validatedBytes", JsonLines.hex(result.validatedRecords().buffer()));
        out.put("maxTimestampMs", result.maxTimestampMs());
        out.put("messageSizeMaybeChanged", result.messageSizeMaybeChanged());
        out.put("logAppendTimeMs", result.logAppendTimeMs());
        RecordValidationStats s = result.recordValidationStats();
        ObjectNode stats = out.putObject("recordValidationStats");
        stats.put("temporaryMemoryBytes", s.temporaryMemoryBytes());
        stats.put("numRecordsConverted", s.numRecordsConverted());
        stats.put("conversionTimeNanos", s.conversionTimeNanos());
        out.put("nextOffset", offset.value);
        out.set("metrics", recorder.json());
    }

    // ------------------------------------------------------------------ UnifiedLog (mock clock, inline scheduler)

    static final class MutableTime implements Time {
        volatile long ms;

        public long milliseconds() { return ms; }
        public long nanoseconds() { return ms * 1_000_000L; }
        public void sleep(long ms) { this.ms += ms; }
        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("MutableTime cannot wait");
        }
    }

    /** Runs one-shot tasks at once on the caller's thread; periodic tasks never run. */
    static final class InlineScheduler implements org.apache.kafka.server.util.Scheduler {
        public void startup() { }
        public void shutdown() { }
        public void resizeThreadPool(int newSize) { }
        public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (periodMs <= 0) task.run();
            return new Done();
        }
    }

    static final class Done implements ScheduledFuture<Object> {
        public long getDelay(TimeUnit unit) { return 0; }
        public int compareTo(Delayed o) { return 0; }
        public boolean cancel(boolean mayInterruptIfRunning) { return false; }
        public boolean isCancelled() { return false; }
        public boolean isDone() { return true; }
        public Object get() { return null; }
        public Object get(long timeout, TimeUnit unit) { return null; }
    }

    static final MutableTime TIME = new MutableTime();
    static final Map<String, UnifiedLog> LOGS = new HashMap<>();

    static void openLog(JsonNode req, ObjectNode out) throws Exception {
        Map<String, String> props = JsonLines.config(req.get("config"));
        UnifiedLog log = UnifiedLog.create(new File(req.path("dir").asText()), new LogConfig(props),
                req.path("logStartOffset").asLong(0), req.path("recoveryPoint").asLong(0), new InlineScheduler(),
                new BrokerTopicStats(false), TIME, 60000, new ProducerStateManagerConfig(86400000, false), 600000,
                new LogDirFailureChannel(1), req.path("clean").asBoolean(true), Optional.empty());
        LOGS.put(req.path("log").asText(), log);
        state(log, out);
    }

    static UnifiedLog log(JsonNode req) {
        UnifiedLog log = LOGS.get(req.path("log").asText());
        if (log == null) throw new IllegalArgumentException("no open log " + req.path("log").asText());
        return log;
    }

    static MemoryRecords records(JsonNode req) {
        return MemoryRecords.readableRecords(ByteBuffer.wrap(JsonLines.unhex(req.path("records").asText())));
    }

    static void appendInfo(LogAppendInfo info, ObjectNode out) {
        LogAnswers.appendInfo(info, out);
    }

    static void state(UnifiedLog log, ObjectNode out) {
        LogAnswers.state(log.logEndOffset(), log.logStartOffset(), log.recoveryPoint(), log.highWatermark(),
                         log.logSegments(), out);
    }

    static Compression compression(String name, JsonNode level) {
        CompressionType type = CompressionType.forName(name);
        if (level == null || level.isNull()) return Compression.of(type).build();
        switch (type) {
            case GZIP: return Compression.gzip().level(level.asInt()).build();
            case LZ4: return Compression.lz4().level(level.asInt()).build();
            case ZSTD: return Compression.zstd().level(level.asInt()).build();
            default: return Compression.of(type).build();
        }
    }

    static void configKeys(ObjectNode out) {
        ArrayNode keys = out.putArray("keys");
        for (Map.Entry<String, ConfigDef.ConfigKey> e : LogConfig.configKeys().entrySet()) {
            ConfigDef.ConfigKey k = e.getValue();
            ObjectNode o = keys.addObject();
            o.put("name", e.getKey());
            o.put("type", k.type.toString());
            if (k.hasDefault() && k.defaultValue != null)
                o.put("default", ConfigDef.convertToString(k.defaultValue, k.type));
            else o.putNull("default");
            o.put("validator", k.validator == null ? null : k.validator.toString());
            String server = org.apache.kafka.server.config.ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS.get(e.getKey());
            o.put("serverName", server);
        }
    }

    static void validateConfig(JsonNode req, ObjectNode out) {
        Map<String, String> props = JsonLines.config(req.get("config"));
        LogConfig.validate(props);
        LogConfig c = new LogConfig(props);
        out.put("messageTimestampType", c.messageTimestampType.name);
        out.put("messageTimestampBeforeMaxMs", c.messageTimestampBeforeMaxMs);
        out.put("messageTimestampAfterMaxMs", c.messageTimestampAfterMaxMs);
        out.put("segmentSize", c.segmentSize());
        out.put("compact", c.compact);
        out.put("delete", c.delete);
    }

    static void dump(JsonNode req, ObjectNode out) throws Exception {
        String[] args = JSON.convertValue(req.get("args"), String[].class);
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        String exception = null;
        int status = 0;
        try {
            System.setOut(new PrintStream(o, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(e, true, StandardCharsets.UTF_8));
            DumpLogSegments.main(args);
        } catch (Exited x) {
            status = x.status;
        } catch (Throwable t) {
            exception = t.getClass().getSimpleName() + ": " + t.getMessage();
        } finally {
            System.out.flush();
            System.err.flush();
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
        out.put("stdout", o.toString(StandardCharsets.UTF_8));
        out.put("stderr", e.toString(StandardCharsets.UTF_8));
        out.put("status", status);
        if (exception == null) out.putNull("exception");
        else out.put("exception", exception);
    }
}
