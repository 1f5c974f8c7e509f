// Kafka 4.4.0's MemoryRecords.filterTo (the cleaner's rewrite of retained records) on given bytes.
// Run as a single-file program on 4.4.0's class path (no build step):
//   java -cp 'conformance/.cache/lib-4.4/*' conformance/legacy-to-v2-4.4/FilterTo44.java NOW_MS DELETE_RETENTION_MS
// (the cleaner's clock and the topic's delete.retention.ms: a batch keeping a tombstone gets their sum
// as its delete horizon).
// stdin: one line per case, "<hex of a record set>[ <offset>,<offset>...]" (offsets to drop);
// stdout: one line per case, the hex of what filterTo wrote (or "ERROR <exception>: <message>").
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

public class FilterTo44 {
    public static void main(String[] args) throws Exception {
        long now = Long.parseLong(args[0]), deleteRetentionMs = Long.parseLong(args[1]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        HexFormat hex = HexFormat.of();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] parts = line.trim().split(" ");
            Set<Long> drop = new HashSet<>();
            if (parts.length > 1)
                for (String o : parts[1].split(",")) drop.add(Long.parseLong(o));
            try {
                MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(hex.parseHex(parts[0])));
                RecordFilter filter = new RecordFilter(now, deleteRetentionMs) {
                    @Override
                    protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
                        return new BatchRetentionResult(BatchRetention.DELETE_EMPTY, false);
                    }

                    @Override
                    protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
                        return !drop.contains(record.offset());
                    }
                };
                ByteBuffer out = ByteBuffer.allocate(Math.max(1024, records.sizeInBytes() * 4));
                MemoryRecords.FilterResult result = records.filterTo(filter, out, BufferSupplier.NO_CACHING, Integer.MAX_VALUE);
                ByteBuffer written = result.outputBuffer();
                written.flip();
                byte[] bytes = new byte[written.remaining()];
                written.get(bytes);
                System.out.println(hex.formatHex(bytes));
            } catch (Exception e) {
                System.out.println("ERROR " + e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            System.out.flush();
        }
    }
}
