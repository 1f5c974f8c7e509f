import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;

/**
 * Compresses files with the codec libraries on the classpath (one release's lz4-java, snappy-java and the
 * JDK's zlib), so kafkafmt's per-line codecs can be compared with them byte for byte.
 *
 * Usage: CodecDriver MODE OUTDIR FILE...   (writes OUTDIR/&lt;file name&gt; for each input)
 *   lz4             one LZ4 block of the whole file, LZ4Factory.fastestInstance().fastCompressor()
 *                   (KafkaLZ4BlockOutputStream's compressor in every release); prints the factory on stderr
 *   gzip:BUF:OUTER:WRITES  new GZIPOutputStream(out, BUF), behind a BufferedOutputStream(.., OUTER) when OUTER
 *                   is not 0, the file written in writes of the sizes WRITES cycles through (comma-separated;
 *                   0: one write), as Kafka's writers write an entry's offset, size and message
 *   snappy:BLOCK    new SnappyOutputStream(out, BLOCK), the file written in one write (0: default block)
 *   zstd:CLASS:OUTER:WRITES  new com.github.luben.zstd.CLASS(out) (zstd-jni's ZstdOutputStream, 2.1's writer, or
 *                   ZstdOutputStreamNoFinalizer, 2.8's), behind a BufferedOutputStream(.., OUTER) when OUTER is not 0
 *                   and a DataOutputStream, written as WRITES says (see gzip) and closed (flush, then end the frame)
 */
public final class CodecDriver {
    public static void main(String[] args) throws Exception {
        String[] mode = args[0].split(":");
        Path outDir = Path.of(args[1]);
        Files.createDirectories(outDir);
        if (mode[0].equals("lz4")) {
            Lz4.describe();
        }
        for (int i = 2; i < args.length; i++) {
            Path in = Path.of(args[i]);
            byte[] data = Files.readAllBytes(in);
            byte[] out;
            switch (mode[0]) {
                case "lz4":
                    out = Lz4.compress(data);
                    break;
                case "gzip": {
                    ByteArrayOutputStream bos = new ByteArrayOutputStream();
                    OutputStream gz = new GZIPOutputStream(bos, Integer.parseInt(mode[1]));
                    int outer = Integer.parseInt(mode[2]);
                    if (outer > 0) {
                        gz = new java.io.BufferedOutputStream(gz, outer);
                    }
                    write(gz, data, mode[3]);
                    gz.close();
                    out = bos.toByteArray();
                    break;
                }
                case "snappy":
                    out = Snappy.compress(data, Integer.parseInt(mode[1]));
                    break;
                case "zstd": {
                    ByteArrayOutputStream bos = new ByteArrayOutputStream();
                    OutputStream z = (OutputStream) Class.forName("com.github.luben.zstd." + mode[1])
                        .getConstructor(OutputStream.class).newInstance(bos);
                    int outer = Integer.parseInt(mode[2]);
                    if (outer > 0) {
                        z = new java.io.BufferedOutputStream(z, outer);
                    }
                    OutputStream s = new java.io.DataOutputStream(z);
                    write(s, data, mode[3]);
                    s.close();
                    out = bos.toByteArray();
                    break;
                }
                default:
                    throw new IllegalArgumentException("unknown mode " + args[0]);
            }
            Files.write(outDir.resolve(in.getFileName()), out);
        }
    }

    /** lz4-java's classes are touched only here, so a run without snappy-java on the class path verifies. */
    private static final class Lz4 {
        static void describe() {
            System.err.println(net.jpountz.lz4.LZ4Factory.fastestInstance());
        }

        static byte[] compress(byte[] data) {
            net.jpountz.lz4.LZ4Compressor c = net.jpountz.lz4.LZ4Factory.fastestInstance().fastCompressor();
            byte[] dest = new byte[c.maxCompressedLength(data.length)];
            int n = c.compress(data, 0, data.length, dest, 0, dest.length);
            return java.util.Arrays.copyOf(dest, n);
        }
    }

    /** snappy-java's classes are touched only here. */
    private static final class Snappy {
        static byte[] compress(byte[] data, int block) throws Exception {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            OutputStream s = block == 0 ? new org.xerial.snappy.SnappyOutputStream(bos)
                                        : new org.xerial.snappy.SnappyOutputStream(bos, block);
            s.write(data);
            s.close();
            return bos.toByteArray();
        }
    }

    private static void write(OutputStream s, byte[] data, String writes) throws Exception {
        String[] sizes = writes.split(",");
        if (sizes.length == 1 && Integer.parseInt(sizes[0]) <= 0) {
            s.write(data);
            return;
        }
        int i = 0;
        for (int off = 0; off < data.length; i++) {
            int n = Math.min(Integer.parseInt(sizes[i % sizes.length]), data.length - off);
            s.write(data, off, n);
            off += n;
        }
    }
}
