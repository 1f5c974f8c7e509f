/*
 * The line protocol every oracle JVM of the rig serves (its Python end is conformance/kafkarig/jsonl_jvm.py):
 * one JSON request per line on stdin, one JSON response per line on stdout, "ok": true with the handler's
 * fields, or "ok": false with the exception's class ("error"), message and cause.  The JVM's own System.out
 * goes to stderr, so that nothing a library prints can mix into the protocol.  Plus the request helpers
 * the oracles share: topic properties and bytes as lowercase hex.
 *
 * This file is original kafkafmt code; it uses Jackson and the JDK only, so it compiles on the class path
 * of every Kafka line (conformance/Makefile, kafkarig.javac).
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

final class JsonLines {
    static final ObjectMapper JSON = new ObjectMapper();
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonLines() { }

    /** What an oracle does with one request: its response fields ("ok" is added). */
    interface Handler {
        ObjectNode serve(JsonNode request) throws Exception;
    }

    /** Turns reload4j's root logger off where the class path has it (Kafka 3.9's jars; 4.x logs through
     *  log4j2), so that no log line reaches the JVM's stderr between requests. */
    static void silenceLog4j() {
        try {
            Class<?> logger = Class.forName("org.apache.log4j.Logger");
            Class<?> level = Class.forName("org.apache.log4j.Level");
            Object root = logger.getMethod("getRootLogger").invoke(null);
            logger.getMethod("setLevel", level).invoke(root, level.getField("OFF").get(null));
        } catch (ReflectiveOperationException | LinkageError ignored) {
            // no reload4j: nothing to silence
        }
    }

    /** Serves requests until stdin ends. */
    static void serve(Handler handler) throws IOException {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            ObjectNode out;
            try {
                out = handler.serve(JSON.readTree(line));
                out.put("ok", true);
            } catch (Throwable t) {
                out = error(t);
            }
            protocol.print(JSON.writeValueAsString(out));
            protocol.print('\n');
            protocol.flush();
        }
    }

    /** The "ok": false response for {@code t} (a reflective call's own exception rather than its wrapper). */
    static ObjectNode error(Throwable t) {
        Throwable c = t instanceof InvocationTargetException && t.getCause() != null ? t.getCause() : t;
        ObjectNode out = NODES.objectNode();
        out.put("ok", false);
        out.put("error", c.getClass().getName());
        out.put("message", String.valueOf(c.getMessage()));
        if (c.getCause() != null) out.put("cause", String.valueOf(c.getCause()));
        return out;
    }

    /** A request's {"config": {...}}: the topic properties a LogConfig is made of, every value as text. */
    static Map<String, String> config(JsonNode cfg) {
        Map<String, String> props = new HashMap<>();
        if (cfg != null) cfg.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        return props;
    }

    /** {@link #config} as Properties (what 3.9's LogConfig.validate takes). */
    static Properties props(JsonNode cfg) {
        Properties props = new Properties();
        props.putAll(config(cfg));
        return props;
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(byte[] a) {
        char[] c = new char[a.length * 2];
        for (int i = 0; i < a.length; i++) {
            c[2 * i] = HEX[(a[i] >> 4) & 15];
            c[2 * i + 1] = HEX[a[i] & 15];
        }
        return new String(c);
    }

    /** The buffer's remaining bytes as hex (its position untouched). */
    static String hex(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        byte[] a = new byte[d.remaining()];
        d.get(a);
        return hex(a);
    }

    static byte[] unhex(String s) {
        if ((s.length() & 1) != 0) throw new IllegalArgumentException("odd-length hex string");
        byte[] a = new byte[s.length() / 2];
        for (int i = 0; i < a.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16), lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) throw new IllegalArgumentException("invalid hex digit near position " + (2 * i));
            a[i] = (byte) ((hi << 4) | lo);
        }
        return a;
    }
}
