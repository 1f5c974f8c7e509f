/*
 * The mock clock and scheduler both cleaner oracles drive Kafka's LogCleaner with (CleanerOracle on Kafka
 * 3.9.2's jars, CleanerOracle44 on 4.4.0's): the Time and Scheduler interfaces are the same in both lines,
 * so this one source is compiled into both class paths (conformance/Makefile).
 */
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.Scheduler;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/** A clock the oracle sets, and a scheduler that runs due tasks inline and keeps the delayed ones. */
final class CleanerClock {
    private CleanerClock() { }

    static final class MutableTime implements Time {
        volatile long ms;

        MutableTime(long ms) {
            this.ms = ms;
        }

        @Override public long milliseconds() { return ms; }
        @Override public long nanoseconds() { return ms * 1_000_000L; }
        @Override public void sleep(long ms) { this.ms += ms; }
        @Override public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("MutableTime cannot wait");
        }
    }

    /** Runs one-shot tasks due at once on the caller's thread and keeps later ones in PENDING (in order of
     *  scheduling) until runDue; periodic tasks never run. */
    static final class InlineScheduler implements Scheduler {
        static final java.util.List<Object[]> PENDING = new java.util.ArrayList<>();  // {name, dueMs, task}
        private final Time time;

        InlineScheduler(Time time) {
            this.time = time;
        }

        @Override public void startup() { }
        @Override public void shutdown() { }
        @Override public void resizeThreadPool(int newSize) { }
        @Override public ScheduledFuture<?> schedule(String name, Runnable task, long delayMs, long periodMs) {
            if (periodMs > 0) return new Done();
            if (delayMs <= 0) task.run();
            else PENDING.add(new Object[] {name, time.milliseconds() + delayMs, task});
            return new Done();
        }

        static void listPending(ObjectNode out) {
            ArrayNode list = out.putArray("scheduled");
            for (Object[] p : PENDING) list.addObject().put("name", (String) p[0]).put("dueMs", (Long) p[1]);
        }

        static ObjectNode runDue(long now, ObjectNode out) {
            ArrayNode ran = out.putArray("ran");
            java.util.List<Object[]> due = new java.util.ArrayList<>();
            for (Object[] p : PENDING) if ((Long) p[1] <= now) due.add(p);
            due.sort(java.util.Comparator.comparingLong(p -> (Long) p[1]));  // stable: ties keep their order
            for (Object[] p : due) {
                PENDING.remove(p);
                ((Runnable) p[2]).run();
                ran.add((String) p[0]);
            }
            listPending(out);
            return out;
        }
    }

    static final class Done implements ScheduledFuture<Object> {
        @Override public long getDelay(TimeUnit unit) { return 0; }
        @Override public int compareTo(Delayed o) { return 0; }
        @Override public boolean cancel(boolean mayInterruptIfRunning) { return false; }
        @Override public boolean isCancelled() { return false; }
        @Override public boolean isDone() { return true; }
        @Override public Object get() { return null; }
        @Override public Object get(long timeout, TimeUnit unit) { return null; }
    }
}
