/*
 * What both cleaner oracles read from a request and write into a response (CleanerOracle on Kafka 3.9.2's
 * jars, CleanerOracle44 on 4.4.0's): the cleaner's settings, with the broker's defaults for those left out,
 * and a record as [offset, key hex, value hex].  CleanerConfig has the same constructor in both lines
 * (org.apache.kafka.storage.internals.log), so this one source is compiled into both class paths
 * (conformance/Makefile).
 *
 * This file is original kafkafmt code; it only calls classes of Kafka's jars.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;

import org.apache.kafka.storage.internals.log.CleanerConfig;

import java.nio.ByteBuffer;

final class CleanerRequests {
    private CleanerRequests() { }

    /** The request's "cleaner" settings: numThreads, dedupeBufferSize, loadFactor, ioBufferSize,
     *  maxMessageSize, backoffMs (log.cleaner.* and message.max.bytes defaults when absent); no I/O throttle. */
    static CleanerConfig cleanerConfig(JsonNode c) {
        return new CleanerConfig(
            c.path("numThreads").asInt(1),
            c.path("dedupeBufferSize").asLong(128L * 1024 * 1024),
            c.path("loadFactor").asDouble(0.9),
            c.path("ioBufferSize").asInt(512 * 1024),
            c.path("maxMessageSize").asInt(1024 * 1024 + 12),
            Double.MAX_VALUE,
            c.path("backoffMs").asLong(15000),
            true);
    }

    /** One record of a "records" answer: [offset, key hex or null, value hex or null]. */
    static void recordRow(ArrayNode records, long offset, ByteBuffer key, ByteBuffer value) {
        ArrayNode rec = records.addArray();
        rec.add(offset);
        rec.add(key == null ? null : JsonLines.hex(key));
        rec.add(value == null ? null : JsonLines.hex(value));
    }
}
