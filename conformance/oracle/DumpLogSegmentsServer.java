import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * kafkafmt's own driver: runs Kafka's real {@code kafka.tools.DumpLogSegments.main} (kafka-dump-log)
 * many times in one JVM, so the conformance runner does not pay a JVM start per call.
 *
 * Protocol (stdin/stdout, UTF-8): one request per line, the tool's arguments separated by TAB.
 * Answer: a header line {@code <exit> <stdoutBytes> <stderrBytes>} then exactly that many bytes of the
 * tool's stdout, then of its stderr.  exit is 0, or 1 when the tool threw (its stack trace is written
 * to the captured stderr as the JVM would: {@code Exception in thread "main" ...}).
 * Contains no Kafka code; it only calls the public entry point from the jars.
 */
public final class DumpLogSegmentsServer {
    public static void main(String[] argv) throws Exception {
        PrintStream realOut = System.out;
        PrintStream realErr = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            final String[] args = line.split("\t", -1);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            final PrintStream pout = new PrintStream(out, true, "UTF-8");
            final PrintStream perr = new PrintStream(err, true, "UTF-8");
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
                                } catch (Exception e) {
                                    throw new RuntimeException(e);
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
                System.setOut(realOut);
                System.setErr(realErr);
            }
            byte[] o = out.toByteArray();
            byte[] e = err.toByteArray();
            realOut.write((exit + " " + o.length + " " + e.length + "\n").getBytes(StandardCharsets.UTF_8));
            realOut.write(o);
            realOut.write(e);
            realOut.flush();
        }
    }
}
