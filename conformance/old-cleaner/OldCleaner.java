// kafkafmt old-release cleaner oracle: an old Apache Kafka release's own kafka.log.Log writes a partition and its
// own LogCleaner thread cleans it, under a mock clock, so `kafkafmt clean --kafka-line X` can be compared with it
// file for file.
//
// This file is original kafkafmt code. It contains no Apache Kafka source and is compiled against nothing but the
// JDK: every Kafka class is reached by reflection, so the one source runs on the jars of 0.9.0.1 … 2.8.2 (their
// constructors differ: the driver picks each by its parameter types). kafkarig.old_cleaner starts it on one
// release's class path.
//
// Protocol: one request per line on stdin, fields separated by tabs; one answer per line on stdout,
// "ok<TAB>..." or "error<TAB><exception class><TAB><message>".
//   write <dir> <props file> <batches file>
//     -> a new Log at <dir> (<log dir>/<topic>-<partition>); each line "<ms> <hex>" of the batches file is
//        appended as a follower appends (offsets kept) with the clock at <ms>; each .log file then gets the
//        time of its segment's last append as its modification time (what a broker's disk shows), the log is
//        closed, and the log dir left as a clean shutdown leaves it (.kafka_cleanshutdown, the recovery-point
//        and replication checkpoints at the log end)
//     <- ok <log end offset>
//   clean <dir> <now> <props file> <recovery point> <dedupe buffer> <io buffer> <max message size> <load factor>
//     -> opens the Log after a clean shutdown, builds the release's LogCleaner (one thread, its
//        cleaner-offset-checkpoint read from the log dir) and runs one iteration of its cleaner thread
//        (CleanerThread.cleanOrSleep before 2.x, cleanFilthiestLog after), then closes the log
//     <- ok <cleaned: true, false, or "?" where the release's step returns nothing>
// The scheduler runs one-shot tasks at once (file.delete.delay.ms should be 0) and never periodic ones.

import java.io.BufferedReader;
import java.io.File;
import java.io.FileInputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

public final class OldCleaner {
    static long now;
    static final ClassLoader CL = OldCleaner.class.getClassLoader();

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        System.setOut(new PrintStream(new java.io.OutputStream() { public void write(int b) { } }));  // Kafka's chatter
        silenceLog4j();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split("\t", -1);
            String answer;
            try {
                switch (f[0]) {
                    case "ping": answer = "ok"; break;
                    case "write": answer = "ok\t" + write(f); break;
                    case "clean": answer = "ok\t" + clean(f); break;
                    default: throw new IllegalArgumentException("unknown request " + f[0]);
                }
            } catch (Throwable t) {
                Throwable c = t;
                while ((c instanceof InvocationTargetException || c.getCause() != null && c != c.getCause()
                        && c.getClass().getName().startsWith("java.lang.reflect")) && c.getCause() != null) {
                    c = c.getCause();
                }
                answer = "error\t" + c.getClass().getName() + "\t" + String.valueOf(c.getMessage()).replace('\n', ' ')
                         .replace('\t', ' ');
            }
            out.println(answer);
        }
    }

    static void silenceLog4j() {
        try {
            Class<?> logger = Class.forName("org.apache.log4j.Logger");
            Class<?> level = Class.forName("org.apache.log4j.Level");
            Object root = logger.getMethod("getRootLogger").invoke(null);
            logger.getMethod("setLevel", level).invoke(root, level.getField("OFF").get(null));
        } catch (Throwable ignored) {
            // no log4j 1 on this class path
        }
    }

    // ------------------------------------------------------------------------------------------- reflection
    static Class<?> cls(String name) throws ClassNotFoundException {
        return Class.forName(name, true, CL);
    }

    static boolean has(String name) {
        try {
            cls(name);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    static Object module(String name) throws Exception {
        return cls(name + "$").getField("MODULE$").get(null);
    }

    static Method method(Class<?> c, String name, int params) {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Method m : k.getDeclaredMethods()) {
                if (m.getName().equals(name) && (params < 0 || m.getParameterCount() == params)) {
                    m.setAccessible(true);
                    return m;
                }
            }
        }
        throw new IllegalStateException(c.getName() + "." + name + " not found");
    }

    static Object call(Object target, String name, Object... args) throws Exception {
        return method(target.getClass(), name, args.length).invoke(target, args);
    }

    /** A mock clock of the Time type the release's Log takes (kafka.utils.Time before 0.10.2, the clients' after). */
    static Object timeProxy() throws Exception {
        String name = null;
        List<Class<?>[]> signatures = new ArrayList<>();
        for (Constructor<?> c : cls("kafka.log.Log").getConstructors()) signatures.add(c.getParameterTypes());
        if (has("kafka.log.Log$")) {
            for (Method m : cls("kafka.log.Log$").getMethods()) {
                if (m.getName().equals("apply")) signatures.add(m.getParameterTypes());
            }
        }
        for (Class<?>[] ps : signatures) {
            for (Class<?> p : ps) if (p.getName().endsWith("utils.Time")) name = p.getName();
        }
        if (name == null) throw new IllegalStateException("no Time parameter in kafka.log.Log");
        Class<?> time = cls(name);
        InvocationHandler h = (proxy, m, a) -> {
            switch (m.getName()) {
                case "milliseconds": case "hiResClockMs": return now;
                case "nanoseconds": return now * 1_000_000L;
                case "sleep": now += (Long) a[0]; return null;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == a[0];
                case "toString": return "MockTime(" + now + ")";
                default:
                    if (m.isDefault()) return InvocationHandler.invokeDefault(proxy, m, a);
                    throw new UnsupportedOperationException("mock time: " + m.getName());
            }
        };
        return Proxy.newProxyInstance(CL, new Class<?>[] {time}, h);
    }

    static Object schedulerProxy() throws Exception {
        Class<?> s = cls("kafka.utils.Scheduler");
        Method apply = cls("scala.Function0").getMethod("apply");
        InvocationHandler h = (proxy, m, a) -> {
            String n = m.getName();
            if (n.equals("schedule")) {
                long delay = (Long) a[2];
                long period = (Long) a[3];
                if (period <= 0 && delay <= 0) apply.invoke(a[1]);
                return m.getReturnType() == void.class ? null : new Done();
            }
            if (n.equals("scheduleOnce")) {
                if (a.length == 2 || (Long) a[2] <= 0) apply.invoke(a[1]);
                return m.getReturnType() == void.class ? null : new Done();
            }
            if (n.endsWith("$default$3")) return 0L;
            if (n.endsWith("$default$4")) return -1L;
            if (n.endsWith("$default$5")) return TimeUnit.MILLISECONDS;
            switch (n) {
                case "isStarted": return true;
                case "startup": case "shutdown": case "resizeThreadPool": return null;
                case "hashCode": return System.identityHashCode(proxy);
                case "equals": return proxy == a[0];
                case "toString": return "InlineScheduler";
                default:
                    if (m.isDefault()) return InvocationHandler.invokeDefault(proxy, m, a);
                    throw new UnsupportedOperationException("inline scheduler: " + n);
            }
        };
        return Proxy.newProxyInstance(CL, new Class<?>[] {s}, h);
    }

    /** The future of a task that ran or never will (2.x's Scheduler returns one). */
    static final class Done implements java.util.concurrent.ScheduledFuture<Object> {
        @Override public long getDelay(TimeUnit unit) { return 0; }
        @Override public int compareTo(java.util.concurrent.Delayed o) { return 0; }
        @Override public boolean cancel(boolean mayInterruptIfRunning) { return false; }
        @Override public boolean isCancelled() { return false; }
        @Override public boolean isDone() { return true; }
        @Override public Object get() { return null; }
        @Override public Object get(long timeout, TimeUnit unit) { return null; }
    }

    static Properties props(String path) throws Exception {
        Properties p = new Properties();
        try (FileInputStream in = new FileInputStream(path)) {
            p.load(in);
        }
        return p;
    }

    static Object logConfig(Properties p) throws Exception {
        Class<?> c = cls("kafka.log.LogConfig");
        for (Constructor<?> k : c.getConstructors()) {
            Class<?>[] t = k.getParameterTypes();
            if (t.length == 1 && t[0] == java.util.Map.class) return k.newInstance(p);
            if (t.length == 2 && t[0] == java.util.Map.class) {
                return k.newInstance(p, call(module("scala.collection.immutable.Set"), "empty"));
            }
        }
        throw new IllegalStateException("no LogConfig(Map) constructor");
    }

    static Object newInstance(String name, Object... args) throws Exception {
        for (Constructor<?> k : cls(name).getConstructors()) {
            if (k.getParameterCount() == args.length) return k.newInstance(args);
        }
        throw new IllegalStateException("no constructor " + name + " of " + args.length + " parameters");
    }

    /** The release's Log over dir: `new Log(...)` (0.9 … 0.10.2) or `Log.apply(...)` (0.11 …), each parameter
     *  filled by its type. */
    static Object openLog(File dir, Object config, long recoveryPoint, Object time) throws Exception {
        Object scheduler = schedulerProxy();
        Method apply = null;
        if (has("kafka.log.Log$")) {
            for (Method m : cls("kafka.log.Log$").getMethods()) {
                if (m.getName().equals("apply") && (apply == null || m.getParameterCount() > apply.getParameterCount())) {
                    apply = m;
                }
            }
        }
        Class<?>[] types;
        Constructor<?> ctor = null;
        if (apply != null) {
            types = apply.getParameterTypes();
        } else {
            for (Constructor<?> k : cls("kafka.log.Log").getConstructors()) {
                if (ctor == null || k.getParameterCount() < ctor.getParameterCount()) ctor = k;
            }
            types = ctor.getParameterTypes();
        }
        Object[] args = new Object[types.length];
        int longs = 0;
        int ints = 0;
        for (Class<?> t : types) if (t == long.class) longs++;
        int seenLongs = 0;
        for (int i = 0; i < types.length; i++) {
            Class<?> t = types[i];
            String n = t.getName();
            if (t == File.class) args[i] = dir;
            else if (n.equals("kafka.log.LogConfig")) args[i] = config;
            else if (t == long.class) args[i] = (longs == 2 && seenLongs++ == 0) ? 0L : recoveryPoint;
            else if (n.equals("kafka.utils.Scheduler")) args[i] = scheduler;
            else if (n.endsWith("utils.Time")) args[i] = time;
            else if (n.equals("kafka.server.BrokerTopicStats")) args[i] = t.getConstructor().newInstance();
            else if (n.equals("kafka.server.LogDirFailureChannel")) args[i] = t.getConstructor(int.class).newInstance(1);
            // maxProducerIdExpirationMs (transactional.id.expiration.ms, 7 days), then the check interval
            else if (t == int.class) args[i] = ints++ == 0 ? 604800000 : 600000;
            else if (t == boolean.class) args[i] = true;  // lastShutdownClean, keepPartitionMetadataFile (2.8)
            else throw new IllegalStateException("Log parameter of type " + n);
        }
        return apply != null ? apply.invoke(module("kafka.log.Log"), args) : ctor.newInstance(args);
    }

    static Object records(byte[] data) throws Exception {
        ByteBuffer buf = ByteBuffer.wrap(data);
        if (has("org.apache.kafka.common.record.MemoryRecords")
                && !has("kafka.message.ByteBufferMessageSet") || logTakesMemoryRecords()) {
            return cls("org.apache.kafka.common.record.MemoryRecords").getMethod("readableRecords", ByteBuffer.class)
                .invoke(null, buf);
        }
        return cls("kafka.message.ByteBufferMessageSet").getConstructor(ByteBuffer.class).newInstance(buf);
    }

    static boolean logTakesMemoryRecords() throws Exception {
        for (Method m : cls("kafka.log.Log").getMethods()) {
            if ((m.getName().equals("append") || m.getName().equals("appendAsFollower")) && m.getParameterCount() >= 1
                && m.getParameterTypes()[0].getName().equals("org.apache.kafka.common.record.MemoryRecords")) {
                return true;
            }
        }
        return false;
    }

    static void appendAsFollower(Object log, Object records) throws Exception {
        for (Method m : log.getClass().getMethods()) {
            if (m.getName().equals("appendAsFollower") && m.getParameterCount() == 1) {
                m.invoke(log, records);
                return;
            }
        }
        log.getClass().getMethod("append", records.getClass(), boolean.class).invoke(log, records, false);
    }

    static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    static String checkpoint(String topic, int partition, long offset) {
        return "0\n1\n" + topic + " " + partition + " " + offset + "\n";
    }

    // ------------------------------------------------------------------------------------------- requests
    static String write(String[] f) throws Exception {
        File dir = new File(f[1]).getAbsoluteFile();
        dir.mkdirs();
        Object time = timeProxy();
        List<String> lines = Files.readAllLines(new File(f[3]).toPath());
        now = lines.isEmpty() ? 0 : Long.parseLong(lines.get(0).split(" ")[0]);
        Object log = openLog(dir, logConfig(props(f[2])), 0L, time);
        TreeMap<Long, Long> lastAppend = new TreeMap<>();
        long end;
        try {
            for (String l : lines) {
                if (l.isEmpty()) continue;
                String[] p = l.split(" ");
                now = Long.parseLong(p[0]);
                appendAsFollower(log, records(hex(p[1])));
                Object active = call(log, "activeSegment");
                lastAppend.put((Long) call(active, "baseOffset"), now);
            }
            end = (Long) call(log, "logEndOffset");
            call(log, "flush");
        } finally {
            call(log, "close");
        }
        for (java.util.Map.Entry<Long, Long> e : lastAppend.entrySet()) {
            File seg = new File(dir, String.format("%020d.log", e.getKey()));
            if (seg.exists()) seg.setLastModified(e.getValue());
        }
        String name = dir.getName();
        int dash = name.lastIndexOf('-');
        String topic = name.substring(0, dash);
        int partition = Integer.parseInt(name.substring(dash + 1));
        File logDir = dir.getParentFile();
        Files.write(new File(logDir, ".kafka_cleanshutdown").toPath(), new byte[0]);
        for (String ckpt : new String[] {"recovery-point-offset-checkpoint", "replication-offset-checkpoint"}) {
            Files.write(new File(logDir, ckpt).toPath(), checkpoint(topic, partition, end).getBytes(StandardCharsets.UTF_8));
        }
        return Long.toString(end);
    }

    static String clean(String[] f) throws Exception {
        File dir = new File(f[1]).getAbsoluteFile();
        now = Long.parseLong(f[2]);
        Object time = timeProxy();
        Object config = logConfig(props(f[3]));
        long recoveryPoint = Long.parseLong(f[4]);
        Object cleanerConfig = newInstance("kafka.log.CleanerConfig", 1, Long.parseLong(f[5]), Double.parseDouble(f[8]),
                                           Integer.parseInt(f[6]), Integer.parseInt(f[7]), Double.MAX_VALUE, 1L,
                                           true, "MD5");
        Object log = openLog(dir, config, recoveryPoint, time);
        String cleaned = "?";
        try {
            for (Method m : log.getClass().getMethods()) {
                if (m.getName().equals("updateHighWatermark") && m.getParameterTypes()[0] == long.class) {
                    m.invoke(log, call(log, "logEndOffset"));
                }
            }
            String name = dir.getName();
            int dash = name.lastIndexOf('-');
            String topic = name.substring(0, dash);
            int partition = Integer.parseInt(name.substring(dash + 1));
            Object tp = has("kafka.common.TopicAndPartition") && !poolKeyIsTopicPartition()
                        ? newInstance("kafka.common.TopicAndPartition", topic, partition)
                        : newInstance("org.apache.kafka.common.TopicPartition", topic, partition);
            Object pool = cls("kafka.utils.Pool").getConstructor(cls("scala.Option")).newInstance(module("scala.None"));
            call(pool, "put", tp, log);
            Object cleaner = null;
            File logDir = dir.getParentFile();
            for (Constructor<?> k : cls("kafka.log.LogCleaner").getConstructors()) {
                Class<?>[] t = k.getParameterTypes();
                Object[] a = new Object[t.length];
                for (int i = 0; i < t.length; i++) {
                    String n = t[i].getName();
                    if (n.equals("kafka.log.CleanerConfig")) a[i] = cleanerConfig;
                    else if (t[i] == File[].class) a[i] = new File[] {logDir};
                    else if (n.equals("scala.collection.Seq")) {
                        a[i] = call(module("scala.Predef"), "wrapRefArray", (Object) new Object[] {logDir});
                    } else if (n.equals("kafka.utils.Pool")) a[i] = pool;
                    else if (n.equals("kafka.server.LogDirFailureChannel")) a[i] = t[i].getConstructor(int.class).newInstance(1);
                    else if (n.endsWith("utils.Time")) a[i] = time;
                    else a = null;
                    if (a == null) break;
                }
                if (a != null) {
                    cleaner = k.newInstance(a);
                    break;
                }
            }
            if (cleaner == null) throw new IllegalStateException("no LogCleaner constructor matched");
            Class<?> thread = cls("kafka.log.LogCleaner$CleanerThread");
            Object worker = thread.getConstructor(cls("kafka.log.LogCleaner"), int.class).newInstance(cleaner, 0);
            Method step = null;
            for (Method m : thread.getDeclaredMethods()) {
                if ((m.getName().endsWith("cleanFilthiestLog") || m.getName().endsWith("cleanOrSleep"))
                        && m.getParameterCount() == 0) step = m;
            }
            if (step == null) throw new IllegalStateException("no cleaner-thread step");
            step.setAccessible(true);
            Object r = step.invoke(worker);
            if (r instanceof Boolean) cleaned = r.toString();
        } finally {
            call(log, "close");
        }
        return cleaned;
    }

    static boolean poolKeyIsTopicPartition() throws Exception {
        for (Constructor<?> k : cls("kafka.log.LogCleaner").getConstructors()) {
            String g = k.toGenericString();
            if (g.contains("org.apache.kafka.common.TopicPartition")) return true;
        }
        return false;
    }
}
