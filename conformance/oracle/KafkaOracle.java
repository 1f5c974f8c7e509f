// kafkafmt conformance oracle: a line-oriented JSON driver around Apache Kafka's released jars.
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only *calls* the
// public classes shipped in the kafka-clients / kafka-storage / kafka-server-common jars so that
// the Python re-implementation can be compared byte for byte with the real thing.
//
// Protocol: one JSON object per line on stdin, one JSON object per line on stdout, in order.
//   request : {"op": "<name>", "id": <optional, echoed back>, ...op fields...}
//   response: {"ok": true, ...} or {"ok": false, "error": "<exception simple class name>", "message": "..."}
// Bytes travel as lowercase hex strings; a Java null stays a JSON null. Every Throwable raised while
// serving a request becomes an ok:false response; the process only exits at EOF on stdin.
// Anything a library prints on System.out is redirected to stderr so it cannot corrupt the protocol.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.ConvertedRecords;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.RecordValidationStats;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.apache.kafka.common.utils.PrimitiveRef;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.storage.internals.log.AppendOrigin;
import org.apache.kafka.storage.internals.log.LogValidator;
import org.apache.kafka.storage.internals.log.RecordValidationException;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Supplier;

public final class KafkaOracle {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Signals a malformed request (missing field, unknown op, bad hex), as opposed to a Kafka error. */
    static final class BadRequest extends RuntimeException {
        BadRequest(String message) {
            super(message);
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        silenceLogging();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode response = serve(line);
            protocol.print(JSON.writeValueAsString(response));
            protocol.print('\n');
            protocol.flush();
        }
    }

    private static void silenceLogging() {
        // Kafka logs through slf4j -> reload4j; without a config it would warn on stderr at the first
        // log call. The oracle has no use for those logs.
        try {
            org.apache.log4j.Logger.getRootLogger().setLevel(org.apache.log4j.Level.OFF);
        } catch (Throwable ignored) {
            // reload4j not on the class path: nothing to silence
        }
    }

    static ObjectNode serve(String line) {
        JsonNode id = null;
        ObjectNode out;
        try {
            JsonNode req = JSON.readTree(line);
            if (req == null || !req.isObject()) throw new BadRequest("request is not a JSON object");
            id = req.get("id");
            String op = text(req, "op", null);
            if (op == null) throw new BadRequest("missing field 'op'");
            out = NODES.objectNode();
            out.put("ok", true);
            switch (op) {
                case "ping": ping(out); break;
                case "build": build(req, out); break;
                case "endTxnMarker": endTxnMarker(req, out); break;
                case "read": read(req, out); break;
                case "compress": compress(req, out); break;
                case "decompress": decompress(req, out); break;
                case "validate": validate(req, out); break;
                case "downConvert": downConvert(req, out); break;
                case "constants": constants(req, out); break;
                default: throw new BadRequest("unknown op '" + op + "'");
            }
        } catch (Reported r) {
            out = r.response;
        } catch (Throwable t) {
            out = error(t);
        }
        if (id != null) out.set("id", id);
        return out;
    }

    static ObjectNode error(Throwable t) {
        ObjectNode out = NODES.objectNode();
        out.put("ok", false);
        out.put("error", t.getClass().getSimpleName());
        out.put("message", t.getMessage());
        out.put("exceptionClass", t.getClass().getName());
        if (t.getCause() != null && t.getCause() != t) {
            out.put("cause", t.getCause().getClass().getSimpleName());
            out.put("causeMessage", t.getCause().getMessage());
        }
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

    // ------------------------------------------------------------------ ops

    static void ping(ObjectNode out) {
        out.put("kafkaVersion", AppInfoParser.getVersion());
        out.put("kafkaCommitId", AppInfoParser.getCommitId());
        out.put("javaVersion", System.getProperty("java.version"));
    }

    /**
     * The static int/short/byte fields of the named classes (public or not, read by reflection), e.g.
     * {"classes": ["org.apache.kafka.common.record.DefaultRecordBatch"]} ->
     * {"constants": {"DefaultRecordBatch.RECORD_BATCH_OVERHEAD": 61, ...}}: the header offsets kafkafmt
     * derives from its layouts, as Kafka defines them.
     */
    static void constants(JsonNode req, ObjectNode out) throws Exception {
        JsonNode classes = req.get("classes");
        if (classes == null || !classes.isArray()) throw new BadRequest("missing array field 'classes'");
        ObjectNode values = out.putObject("constants");
        for (JsonNode name : classes) {
            Class<?> cls = Class.forName(name.asText());
            for (java.lang.reflect.Field f : cls.getDeclaredFields()) {
                int mod = f.getModifiers();
                Class<?> t = f.getType();
                if (!java.lang.reflect.Modifier.isStatic(mod) || !(t == int.class || t == short.class || t == byte.class))
                    continue;
                f.setAccessible(true);
                values.put(cls.getSimpleName() + "." + f.getName(), f.getInt(null));
            }
        }
    }

    static void build(JsonNode req, ObjectNode out) {
        byte magic = (byte) integer(req, "magic", RecordBatch.CURRENT_MAGIC_VALUE);
        Compression compression = compression(text(req, "compression", "none"), req.get("level"));
        TimestampType tsType = TimestampType.forName(text(req, "timestampType", "CreateTime"));
        long baseOffset = longValue(req, "baseOffset", 0L);
        long logAppendTime = longValue(req, "logAppendTime", RecordBatch.NO_TIMESTAMP);
        long producerId = longValue(req, "producerId", RecordBatch.NO_PRODUCER_ID);
        short producerEpoch = (short) integer(req, "producerEpoch", RecordBatch.NO_PRODUCER_EPOCH);
        int baseSequence = integer(req, "baseSequence", RecordBatch.NO_SEQUENCE);
        boolean isTransactional = bool(req, "isTransactional", false);
        boolean isControlBatch = bool(req, "isControlBatch", false);
        int ple = integer(req, "partitionLeaderEpoch", RecordBatch.NO_PARTITION_LEADER_EPOCH);
        long deleteHorizonMs = longValue(req, "deleteHorizonMs", RecordBatch.NO_TIMESTAMP);

        ByteBufferOutputStream stream = new ByteBufferOutputStream(ByteBuffer.allocate(integer(req, "initialCapacity", 1024)));
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(stream, magic, compression, tsType, baseOffset,
                logAppendTime, producerId, producerEpoch, baseSequence, isTransactional, isControlBatch, ple,
                Integer.MAX_VALUE, deleteHorizonMs);

        long nextOffset = baseOffset;
        JsonNode records = req.get("records");
        if (records != null && !records.isNull()) {
            for (JsonNode r : records) {
                long ts = longValue(r, "timestamp", RecordBatch.NO_TIMESTAMP);
                byte[] key = hexField(r, "key");
                byte[] value = hexField(r, "value");
                Header[] headers = headers(r.get("headers"));
                boolean hasOffset = r.hasNonNull("offset");
                long offset = hasOffset ? r.get("offset").asLong() : nextOffset;
                String controlType = text(r, "controlType", null);
                if (controlType != null) {
                    // Kafka writes the control key itself; the offset is the builder's next sequential one.
                    if (hasOffset) throw new BadRequest("'controlType' records take no 'offset'; use 'control': true with an explicit key");
                    builder.appendControlRecord(ts, ControlRecordType.valueOf(controlType),
                            value == null ? null : ByteBuffer.wrap(value));
                } else if (bool(r, "control", false)) {
                    builder.appendControlRecordWithOffset(offset, new SimpleRecord(ts, key, value, headers));
                } else if (hasOffset) {
                    builder.appendWithOffset(offset, ts, key, value, headers);
                } else {
                    builder.append(ts, key, value, headers);
                }
                nextOffset = offset + 1;
            }
        }
        MemoryRecords built = builder.build();
        MemoryRecordsBuilder.RecordsInfo info = builder.info();
        out.put("bytes", JsonLines.hex(built.buffer()));
        out.put("sizeInBytes", built.sizeInBytes());
        out.put("maxTimestamp", info.maxTimestamp);
        out.put("shallowOffsetOfMaxTimestamp", info.shallowOffsetOfMaxTimestamp);
        out.put("numRecords", builder.numRecords());
        out.put("uncompressedBytesWritten", builder.uncompressedBytesWritten());
    }

    static void endTxnMarker(JsonNode req, ObjectNode out) {
        ControlRecordType type = ControlRecordType.valueOf(required(req, "controlType").asText());
        EndTransactionMarker marker = new EndTransactionMarker(type, integer(req, "coordinatorEpoch", 0));
        MemoryRecords records = MemoryRecords.withEndTransactionMarker(
                longValue(req, "baseOffset", 0L),
                longValue(req, "timestamp", RecordBatch.NO_TIMESTAMP),
                integer(req, "partitionLeaderEpoch", RecordBatch.NO_PARTITION_LEADER_EPOCH),
                required(req, "producerId").asLong(),
                (short) required(req, "producerEpoch").asInt(),
                marker);
        out.put("bytes", JsonLines.hex(records.buffer()));
        out.put("sizeInBytes", records.sizeInBytes());
    }

    static void read(JsonNode req, ObjectNode out) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(hexRequired(req, "bytes")));
        ArrayNode batches = NODES.arrayNode();
        try {
            for (RecordBatch batch : records.batches()) {
                batches.add(describeBatch(batch));
            }
        } catch (Throwable t) {
            // Kafka refused the input: report the failure, plus what was read before it.
            ObjectNode err = error(t);
            err.set("batchesBeforeError", batches);
            throw new Reported(err);
        }
        out.set("batches", batches);
        out.put("sizeInBytes", records.sizeInBytes());
        out.put("validBytes", records.validBytes());
    }

    static ObjectNode describeBatch(RecordBatch batch) {
        ObjectNode b = NODES.objectNode();
        b.put("magic", batch.magic());
        b.put("sizeInBytes", batch.sizeInBytes());
        b.put("isValid", batch.isValid());
        b.put("checksum", batch.checksum());
        b.put("compression", batch.compressionType().name);
        b.put("timestampType", batch.timestampType().name);
        b.put("maxTimestamp", batch.maxTimestamp());
        b.put("baseOffset", batch.baseOffset());
        b.put("lastOffset", batch.lastOffset());
        Integer count = batch.countOrNull();
        if (count == null) b.putNull("count"); else b.put("count", count);
        b.put("producerId", batch.producerId());
        b.put("producerEpoch", batch.producerEpoch());
        b.put("baseSequence", batch.baseSequence());
        b.put("lastSequence", batch.lastSequence());
        b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
        b.put("isTransactional", batch.isTransactional());
        b.put("isControlBatch", batch.isControlBatch());
        OptionalLong horizon = batch.deleteHorizonMs();
        if (horizon.isPresent()) b.put("deleteHorizonMs", horizon.getAsLong()); else b.putNull("deleteHorizonMs");
        ArrayNode recs = b.putArray("records");
        for (Record r : batch) {
            recs.add(describeRecord(r, batch.isControlBatch()));
        }
        java.util.Optional<Long> maxOffset = batch.offsetOfMaxTimestamp();
        if (maxOffset.isPresent()) b.put("offsetOfMaxTimestamp", maxOffset.get()); else b.putNull("offsetOfMaxTimestamp");
        return b;
    }

    static ObjectNode describeRecord(Record r, boolean control) {
        ObjectNode n = NODES.objectNode();
        n.put("offset", r.offset());
        n.put("timestamp", r.timestamp());
        n.put("sequence", r.sequence());
        n.put("sizeInBytes", r.sizeInBytes());
        n.put("key", r.hasKey() ? JsonLines.hex(r.key()) : null);
        n.put("value", r.hasValue() ? JsonLines.hex(r.value()) : null);
        ArrayNode hs = n.putArray("headers");
        for (Header h : r.headers()) {
            ObjectNode hn = hs.addObject();
            hn.put("key", h.key());
            hn.put("value", h.value() == null ? null : JsonLines.hex(h.value()));
        }
        if (control) {
            // Decoding the control key/value is what consumers and DumpLogSegments do; a failure here is
            // reported on the record instead of failing the whole read.
            try {
                ControlRecordType type = r.hasKey() ? ControlRecordType.parse(r.key()) : ControlRecordType.UNKNOWN;
                n.put("controlType", type.name());
                n.put("controlTypeId", r.hasKey() && r.keySize() >= 4 ? ControlRecordType.parseTypeId(r.key()) : -1);
                if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                    n.put("coordinatorEpoch", EndTransactionMarker.deserialize(r).coordinatorEpoch());
                }
            } catch (Throwable t) {
                n.put("controlError", t.getClass().getSimpleName() + ": " + t.getMessage());
            }
        }
        return n;
    }

    static void compress(JsonNode req, ObjectNode out) throws Exception {
        Compression c = compression(required(req, "codec").asText(), req.get("level"));
        byte magic = (byte) integer(req, "magic", RecordBatch.CURRENT_MAGIC_VALUE);
        byte[] data = hexRequired(req, "data");
        ByteBufferOutputStream sink = new ByteBufferOutputStream(Math.max(64, data.length + 64));
        try (OutputStream os = c.wrapForOutput(sink, magic)) {
            os.write(data);
        }
        ByteBuffer buf = sink.buffer().duplicate();
        buf.flip();
        out.put("data", JsonLines.hex(buf));
    }

    static void decompress(JsonNode req, ObjectNode out) throws Exception {
        Compression c = compression(required(req, "codec").asText(), req.get("level"));
        byte magic = (byte) integer(req, "magic", RecordBatch.CURRENT_MAGIC_VALUE);
        byte[] data = hexRequired(req, "data");
        try (BufferSupplier supplier = BufferSupplier.create();
             InputStream is = c.wrapForInput(ByteBuffer.wrap(data), magic, supplier)) {
            java.io.ByteArrayOutputStream plain = new java.io.ByteArrayOutputStream();
            byte[] chunk = new byte[8192];
            int n;
            while ((n = is.read(chunk, 0, chunk.length)) != -1) plain.write(chunk, 0, n);
            out.put("data", JsonLines.hex(plain.toByteArray()));
        }
    }

    static void validate(JsonNode req, ObjectNode out) throws Exception {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(hexRequired(req, "bytes")));
        long now = longValue(req, "now", 0L);
        String target = text(req, "targetCompression", text(req, "sourceCompression", "none"));
        CountingRecorder recorder = new CountingRecorder();
        LogValidator validator = new LogValidator(
                records,
                new TopicPartition(text(req, "topic", "topic"), integer(req, "partition", 0)),
                new FixedTime(now),
                CompressionType.forName(text(req, "sourceCompression", "none")),
                compression(target, req.get("targetLevel")),
                bool(req, "compactedTopic", false),
                (byte) integer(req, "toMagic", RecordBatch.CURRENT_MAGIC_VALUE),
                TimestampType.forName(text(req, "timestampType", "CreateTime")),
                longValue(req, "timestampBeforeMaxMs", Long.MAX_VALUE),
                longValue(req, "timestampAfterMaxMs", Long.MAX_VALUE),
                integer(req, "partitionLeaderEpoch", RecordBatch.NO_PARTITION_LEADER_EPOCH),
                AppendOrigin.valueOf(text(req, "origin", "CLIENT")),
                MetadataVersion.fromVersionString(text(req, "interBrokerProtocolVersion", "3.9")));
        PrimitiveRef.LongRef offset = PrimitiveRef.ofLong(longValue(req, "offset", 0L));
        LogValidator.ValidationResult result;
        try (BufferSupplier supplier = BufferSupplier.create()) {
            result = validator.validateMessagesAndAssignOffsets(offset, recorder, supplier);
        } catch (Throwable t) {
            ObjectNode err = error(t);
            err.set("metrics", recorder.toJson());
            err.put("nextOffset", offset.value);
            throw new Reported(err);
        }
        out.put("validatedBytes", JsonLines.hex(result.validatedRecords.buffer()));
        out.put("maxTimestampMs", result.maxTimestampMs);
        // 3.9 dropped the offset of the max timestamp from ValidationResult; report it only if present.
        for (String name : new String[] {"shallowOffsetOfMaxTimestamp", "shallowOffsetOfMaxTimestampMs", "offsetOfMaxTimestampMs"}) {
            try {
                Field f = LogValidator.ValidationResult.class.getField(name);
                out.put(name, f.getLong(result));
            } catch (NoSuchFieldException ignored) {
                // not in this Kafka version
            }
        }
        out.put("messageSizeMaybeChanged", result.messageSizeMaybeChanged);
        out.put("logAppendTimeMs", result.logAppendTimeMs);
        out.set("recordValidationStats", stats(result.recordValidationStats));
        out.put("nextOffset", offset.value);
        out.set("metrics", recorder.toJson());
    }

    static void downConvert(JsonNode req, ObjectNode out) {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(hexRequired(req, "bytes")));
        // MemoryRecords.downConvert is the public entry point of the (protected) RecordsUtil.downConvert.
        ConvertedRecords<MemoryRecords> converted = records.downConvert(
                (byte) required(req, "toMagic").asInt(),
                longValue(req, "firstOffset", 0L),
                new FixedTime(longValue(req, "now", 0L)));
        out.put("bytes", JsonLines.hex(converted.records().buffer()));
        out.set("recordConversionStats", stats(converted.recordConversionStats()));
    }

    // ------------------------------------------------------------------ helpers

    /** Carries a fully formed error response (with extra fields) out of an op. */
    static final class Reported extends RuntimeException {
        final ObjectNode response;

        Reported(ObjectNode response) {
            super(response.path("message").asText(), null, false, false);
            this.response = response;
        }
    }

    static ObjectNode stats(RecordValidationStats s) {
        ObjectNode n = NODES.objectNode();
        n.put("temporaryMemoryBytes", s.temporaryMemoryBytes());
        n.put("numRecordsConverted", s.numRecordsConverted());
        n.put("conversionTimeNanos", s.conversionTimeNanos());
        return n;
    }

    static Compression compression(String name, JsonNode level) {
        CompressionType type = CompressionType.forName(name);
        if (level == null || level.isNull()) return Compression.of(type).build();
        int l = level.asInt();
        switch (type) {
            case GZIP: return Compression.gzip().level(l).build();
            case LZ4: return Compression.lz4().level(l).build();
            case ZSTD: return Compression.zstd().level(l).build();
            default: throw new IllegalArgumentException("Compression type " + type.name + " has no level");
        }
    }

    static Header[] headers(JsonNode hs) {
        if (hs == null || hs.isNull()) return Record.EMPTY_HEADERS;
        List<Header> list = new ArrayList<>();
        for (JsonNode h : hs) {
            JsonNode k = h.get("key");
            list.add(new RecordHeader(k == null || k.isNull() ? null : k.asText(), hexField(h, "value")));
        }
        return list.toArray(new Header[0]);
    }

    /** A clock frozen at the requested instant, so LogAppendTime and conversion times are deterministic. */
    static final class FixedTime implements Time {
        private final long ms;

        FixedTime(long ms) {
            this.ms = ms;
        }

        @Override public long milliseconds() { return ms; }
        @Override public long nanoseconds() { return ms * 1_000_000L; }
        @Override public void sleep(long ms) { }
        @Override public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("FixedTime cannot wait");
        }
    }

    static final class CountingRecorder implements LogValidator.MetricsRecorder {
        int invalidMagic, invalidOffset, invalidSequence, invalidChecksums, noKeyCompactedTopic;

        @Override public void recordInvalidMagic() { invalidMagic++; }
        @Override public void recordInvalidOffset() { invalidOffset++; }
        @Override public void recordInvalidSequence() { invalidSequence++; }
        @Override public void recordInvalidChecksums() { invalidChecksums++; }
        @Override public void recordNoKeyCompactedTopic() { noKeyCompactedTopic++; }

        ObjectNode toJson() {
            ObjectNode n = NODES.objectNode();
            n.put("invalidMagic", invalidMagic);
            n.put("invalidOffset", invalidOffset);
            n.put("invalidSequence", invalidSequence);
            n.put("invalidChecksums", invalidChecksums);
            n.put("noKeyCompactedTopic", noKeyCompactedTopic);
            return n;
        }
    }

    static JsonNode required(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) throw new BadRequest("missing field '" + field + "'");
        return v;
    }

    static String text(JsonNode n, String field, String dflt) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? dflt : v.asText();
    }

    static long longValue(JsonNode n, String field, long dflt) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) return dflt;
        if (!v.canConvertToLong()) throw new BadRequest("field '" + field + "' is not a 64-bit integer: " + v);
        return v.asLong();
    }

    static int integer(JsonNode n, String field, int dflt) {
        JsonNode v = n.get(field);
        if (v == null || v.isNull()) return dflt;
        if (!v.canConvertToInt()) throw new BadRequest("field '" + field + "' is not a 32-bit integer: " + v);
        return v.asInt();
    }

    static boolean bool(JsonNode n, String field, boolean dflt) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? dflt : v.asBoolean();
    }

    static byte[] hexField(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : unhex(v.asText());
    }

    static byte[] hexRequired(JsonNode n, String field) {
        return unhex(required(n, field).asText());
    }

    static byte[] unhex(String s) {
        try {
            return JsonLines.unhex(s);
        } catch (IllegalArgumentException e) {
            throw new BadRequest(e.getMessage());
        }
    }
}
