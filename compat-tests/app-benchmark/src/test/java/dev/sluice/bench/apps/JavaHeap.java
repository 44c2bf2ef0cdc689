package dev.sluice.bench.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How much of a running JVM's Java heap is resident: the heap's address range as the JVM reports it
 * ({@code jcmd <pid> GC.heap_info}), and the resident pages of the mappings within it
 * ({@code /proc/<pid>/smaps}). A process's resident set less its heap's is what it holds outside the
 * heap: the JVM's own memory (metaspace, compiled code, thread stacks) and what native code allocates
 * (librdkafka's queues, RocksDB's memtables and cache, Sluice's engine), which the collector's sizing of
 * the heap does not move.
 */
final class JavaHeap {

    /**
     * An address range of {@code GC.heap_info}: {@code [start, end)} of G1's heap, {@code [start, top, end)}
     * of a generation (or a space within it) of the serial and parallel collectors.
     */
    private static final Pattern RANGE = Pattern.compile("\\[0x([0-9a-f]+),(?: 0x[0-9a-f]+,)* 0x([0-9a-f]+)\\)");
    private static final Pattern MAPPING = Pattern.compile("^([0-9a-f]+)-([0-9a-f]+) .*");
    private static final long ASK_TIMEOUT_SECONDS = 30;

    private JavaHeap() {
    }

    /** The resident bytes of the Java heap of the JVM {@code pid}. */
    static long residentBytes(final long pid) {
        final long[] range = reservedRange(pid);
        final Path smaps = Path.of("/proc", Long.toString(pid), "smaps");
        try {
            long resident = 0;
            boolean inHeap = false;
            for (final String line : Files.readAllLines(smaps, StandardCharsets.ISO_8859_1)) {
                final Matcher mapping = MAPPING.matcher(line);
                if (mapping.matches()) {
                    inHeap = Long.parseUnsignedLong(mapping.group(1), 16) >= range[0]
                        && Long.parseUnsignedLong(mapping.group(2), 16) <= range[1];
                } else if (inHeap && line.startsWith("Rss:")) {
                    resident += Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
            return resident;
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + smaps, e);
        }
    }

    /** From the lowest start to the highest end of the ranges the JVM gives for its heap's parts. */
    private static long[] reservedRange(final long pid) {
        final String answer = heapInfo(pid);
        final Matcher range = RANGE.matcher(answer);
        long start = -1;
        long end = 0;
        while (range.find()) {
            final long partStart = Long.parseUnsignedLong(range.group(1), 16);
            start = start < 0 ? partStart : Math.min(start, partStart);
            end = Math.max(end, Long.parseUnsignedLong(range.group(2), 16));
        }
        if (start < 0) {
            throw new IllegalStateException("no heap range in the GC.heap_info of " + pid + ": " + answer);
        }
        return new long[] {start, end};
    }

    private static String heapInfo(final long pid) {
        final Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            final Process process = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.heap_info")
                .redirectErrorStream(true).start();
            final String answer = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(ASK_TIMEOUT_SECONDS, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException("jcmd " + pid + " GC.heap_info failed: " + answer);
            }
            return answer;
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot run " + jcmd, e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking " + pid + " for its heap", e);
        }
    }
}
