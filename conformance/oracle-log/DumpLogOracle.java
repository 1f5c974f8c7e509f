// kafkafmt's own driver: runs Kafka 3.9's real kafka.tools.DumpLogSegments.main (kafka-dump-log) many times
// in one JVM, so the differential runner does not pay a JVM start per call.
//
// This file is original kafkafmt code. It contains no Apache Kafka source; it only calls the tool's public
// entry point from the jars `make oracle` fetches into conformance/.cache/lib. kafkarig.dump_log compiles it
// on first use.
//
// Protocol: the rig's one JVM transport (kafkarig.jsonl_jvm, oracle-shared/JsonLines.java): one JSON request
// per line on stdin, one JSON response per line on stdout.
//   {"op": "ping"}                 -> {"ok": true}
//   {"op": "dump", "args": [...]}  -> {"ok": true, "exit": 0|1, "stdout": "...", "stderr": "..."}
// exit is 1 when the tool threw; its stack trace is then in stderr as the JVM would print it
// ("Exception in thread "main" ..."). A malformed request: {"ok": false, "error": ..., "message": ...}.
// Nothing else reaches stdout: the JVM's own System.out goes to stderr between requests.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

public final class DumpLogOracle {
    public static void main(String[] argv) throws Exception {
        JsonLines.serve(DumpLogOracle::serve);
    }

    static ObjectNode serve(JsonNode req) {
        ObjectNode out = JsonLines.NODES.objectNode();
        String op = req.path("op").asText();
        if (op.equals("dump")) {
            JsonNode a = req.get("args");
            String[] args = new String[a.size()];
            for (int i = 0; i < args.length; i++) args[i] = a.get(i).asText();
            dump(args, out, System.out);
        } else if (!op.equals("ping")) {
            throw new IllegalArgumentException("unknown op " + op);
        }
        return out;
    }

    /** One kafka-dump-log run with System.out/err and Scala's Console.out/err captured. */
    private static void dump(String[] args, ObjectNode out, PrintStream idleOut) {
        PrintStream realErr = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        final PrintStream pout = new PrintStream(o, true, StandardCharsets.UTF_8);
        final PrintStream perr = new PrintStream(e, true, StandardCharsets.UTF_8);
        int exit = 0;
        System.setOut(pout);
        System.setErr(perr);
        try {
            scala.Console$.MODULE$.withOut((OutputStream) pout, new scala.runtime.AbstractFunction0<Object>() {
                public Object apply() {
                    return scala.Console$.MODULE$.withErr((OutputStream) perr, new scala.runtime.AbstractFunction0<Object>() {
                        public Object apply() {
                            try {
                                kafka.tools.DumpLogSegments.main(args);
                            } catch (Exception ex) {
                                throw new RuntimeException(ex);
                            }
                            return null;
                        }
                    });
                }
            });
        } catch (Throwable t) {
            Throwable cause = t;
            if (t instanceof RuntimeException && t.getCause() != null && t.getClass() == RuntimeException.class) {
                cause = t.getCause();
            }
            perr.print("Exception in thread \"main\" ");
            cause.printStackTrace(perr);
            exit = 1;
        } finally {
            pout.flush();
            perr.flush();
            System.setOut(idleOut);
            System.setErr(realErr);
        }
        out.put("exit", exit);
        out.put("stdout", o.toString(StandardCharsets.UTF_8));
        out.put("stderr", e.toString(StandardCharsets.UTF_8));
    }
}
