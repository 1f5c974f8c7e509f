import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A Kafka application of one era: the Java kafka-clients of the release it is compiled against and
 * run with (0.9.0.1, 0.10.x, 0.11.0.3), producing and consuming for real. One job per JVM, given on
 * the command line; one JSON object per output line, the last one {"ok": ...}.
 *
 *   OldClient produce BOOTSTRAP TOPIC PARTITION COMPRESSION COUNT TIMESTAMP_BASE [VALUE_PREFIX [TIMESTAMPS]]
 *       records key "k<i>", value VALUE_PREFIX + i (default "value-"), timestamp TIMESTAMP_BASE + i or the
 *       i-th of the comma-separated TIMESTAMPS (when the API has one: ProducerRecord's timestamp arrived in
 *       0.10.0, KIP-32; -1 = none); sent together, then flushed, so they travel in one request; prints
 *       {"offset": ...} per record.  System properties -Doldclient.producer.KEY=VALUE set (or override) the
 *       producer's configuration, e.g. enable.idempotence=true with the acks, retries and in-flight limit its
 *       release requires; an error is reported as the client raised it (root cause class: message).
 *   OldClient consume BOOTSTRAP TOPIC PARTITION OFFSET COUNT
 *       assign + seek, poll until COUNT records or the timeout; prints one object per record with
 *       offset, key, value and (0.10+) timestamp and timestampType.
 *
 * The API differences between eras are bridged by reflection, so one source compiles against all.
 */
public final class OldClient {
    private static final long TIMEOUT_MS = Long.getLong("oldclient.timeout.ms", 15000L);
    private static final String PRODUCER_PREFIX = "oldclient.producer.";
    // -Doldclient.watchdog.margin.ms: a producer-only run that expects no broker can ask for a smaller margin
    private static final long WATCHDOG_MARGIN_MS = Long.getLong("oldclient.watchdog.margin.ms", 10000L);

    public static void main(String[] args) {
        // old clients may block for ever on metadata a broker never gives (poll and close ignore their
        // timeouts there): a watchdog ends the JVM with a verdict, late enough that a consumer's own poll loop
        // (TIMEOUT_MS from the consumer's start, however long a loaded machine makes that start) ends first
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(TIMEOUT_MS + WATCHDOG_MARGIN_MS);
            } catch (InterruptedException e) {
                return;
            }
            fail("no answer from the broker within " + (TIMEOUT_MS + WATCHDOG_MARGIN_MS) + " ms");
        });
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            if (args.length > 0 && args[0].equals("produce") && args.length >= 7 && args.length <= 9) {
                produce(args[1], args[2], Integer.parseInt(args[3]), args[4], Integer.parseInt(args[5]),
                        Long.parseLong(args[6]), args.length > 7 ? args[7] : "value-",
                        args.length > 8 ? args[8].split(",") : null);
            } else if (args.length > 0 && args[0].equals("consume") && args.length == 6) {
                consume(args[1], args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]),
                        Integer.parseInt(args[5]));
            } else {
                fail("usage: OldClient produce BOOTSTRAP TOPIC PARTITION COMPRESSION COUNT TS_BASE [VALUE_PREFIX "
                        + "[TIMESTAMPS]] | "
                        + "consume BOOTSTRAP TOPIC PARTITION OFFSET COUNT");
            }
        } catch (Throwable t) {
            Throwable root = t;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            fail(root.getClass().getName() + ": " + root.getMessage());
        }
        System.out.flush();
        System.exit(0);
    }

    private static synchronized void fail(String message) {
        System.out.println("{\"ok\":false,\"version\":" + str(version()) + ",\"error\":" + str(message) + "}");
        System.out.flush();
        System.exit(0);
    }

    private static String version() {
        try {
            Class<?> info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
            return (String) info.getMethod("getVersion").invoke(null);
        } catch (ReflectiveOperationException e) {
            return "unknown";
        }
    }

    private static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "oldclient");
        return p;
    }

    private static void produce(String bootstrap, String topic, int partition, String compression, int count,
                                long tsBase, String valuePrefix, String[] timestamps) throws Exception {
        Properties p = common(bootstrap);
        p.put("acks", "all");
        p.put("compression.type", compression);
        p.put("linger.ms", "200");
        p.put("retries", "0");
        p.put("max.block.ms", Long.toString(TIMEOUT_MS));      // 0.9: metadata.fetch.timeout.ms
        p.put("metadata.fetch.timeout.ms", Long.toString(TIMEOUT_MS));
        p.put("request.timeout.ms", Long.toString(TIMEOUT_MS));
        // -Doldclient.producer.KEY=VALUE overrides (kafkarig.oldclients.producer_settings: enable.idempotence and
        // what the release requires with it); the release's own KafkaProducer checks them
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(PRODUCER_PREFIX)) {
                p.put(name.substring(PRODUCER_PREFIX.length()), System.getProperty(name));
            }
        }
        Constructor<?> withTimestamp = null;
        try {
            withTimestamp = ProducerRecord.class.getConstructor(String.class, Integer.class, Long.class,
                    Object.class, Object.class);
        } catch (NoSuchMethodException e) {
            // 0.9: records have no timestamp (KIP-32 came with 0.10.0)
        }
        KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        try {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
                byte[] value = (valuePrefix + i).getBytes(StandardCharsets.UTF_8);
                long ts = timestamps != null ? Long.parseLong(timestamps[i]) : tsBase + i;
                ProducerRecord<byte[], byte[]> record;
                if (withTimestamp != null && tsBase >= 0) {
                    @SuppressWarnings("unchecked")
                    ProducerRecord<byte[], byte[]> r = (ProducerRecord<byte[], byte[]>) withTimestamp.newInstance(
                            topic, partition, ts, key, value);
                    record = r;
                } else {
                    record = new ProducerRecord<>(topic, partition, key, value);
                }
                sent.add(producer.send(record));
            }
            producer.flush();
            for (Future<RecordMetadata> f : sent) {
                RecordMetadata m = f.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
                System.out.println("{\"offset\":" + m.offset() + "}");
            }
        } finally {
            producer.close(5, TimeUnit.SECONDS);
        }
        System.out.println("{\"ok\":true,\"version\":" + str(version()) + ",\"timestamps\":" + (withTimestamp != null)
                + "}");
    }

    private static void consume(String bootstrap, String topic, int partition, long offset, int count)
            throws Exception {
        Properties p = common(bootstrap);
        p.put("enable.auto.commit", "false");
        p.put("request.timeout.ms", Long.toString(TIMEOUT_MS + 20000));
        p.put("session.timeout.ms", "10000");
        p.put("fetch.max.wait.ms", "200");
        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        Method timestamp = null;
        Method timestampType = null;
        try {
            timestamp = ConsumerRecord.class.getMethod("timestamp");
            timestampType = ConsumerRecord.class.getMethod("timestampType");
        } catch (NoSuchMethodException e) {
            // 0.9 consumer records carry no timestamp
        }
        int got = 0;
        try {
            TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(Collections.singletonList(tp));
            consumer.seek(tp, offset);
            long deadline = System.currentTimeMillis() + TIMEOUT_MS;
            while (got < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(200L);
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    StringBuilder line = new StringBuilder("{\"offset\":").append(r.offset());
                    line.append(",\"key\":").append(str(r.key())).append(",\"value\":").append(str(r.value()));
                    if (timestamp != null) {
                        line.append(",\"timestamp\":").append(timestamp.invoke(r));
                        line.append(",\"timestampType\":").append(str(String.valueOf(timestampType.invoke(r))));
                    }
                    System.out.println(line.append('}'));
                    got++;
                }
            }
        } finally {
            consumer.close();
        }
        if (got < count) {
            fail("consumed " + got + " of " + count + " records within " + TIMEOUT_MS + " ms");
        }
        System.out.println("{\"ok\":true,\"version\":" + str(version()) + ",\"records\":" + got + "}");
    }

    private static String str(byte[] b) {
        return b == null ? "null" : str(new String(b, StandardCharsets.UTF_8));
    }

    private static String str(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
