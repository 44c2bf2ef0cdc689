package dev.sluice.bench.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What Linux says of a running JVM: the CPU time of all its threads so far, living and ended, its peak
 * resident set (VmHWM), how much of its Java heap is resident now ({@link JavaHeap}), and the CPU time of
 * its living threads grouped by what they do.
 */
record ProcessSample(double cpuSeconds, long peakRssBytes, long heapResidentBytes, Map<String, Double> threadCpuSeconds) {

    // Linux reports CPU times in clock ticks of USER_HZ, 100 on every platform Java runs on.
    private static final double TICKS_PER_SECOND = 100.0;

    static ProcessSample of(final long pid) {
        final Path proc = Path.of("/proc", Long.toString(pid));
        final Map<String, Double> threads = new TreeMap<>();
        try (Stream<Path> tasks = Files.list(proc.resolve("task"))) {
            tasks.forEach(task -> {
                try {
                    final String stat = Files.readString(task.resolve("stat"));
                    threads.merge(threadGroup(stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'))), cpuSeconds(stat),
                        Double::sum);
                } catch (final NoSuchFileException ended) {
                    // the thread ended while the list was read; the process total below still counts it
                } catch (final IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            final double cpuSeconds = cpuSeconds(Files.readString(proc.resolve("stat")));
            // Asked last: the JVM answers on a thread of its own, whose CPU time is not the workload's.
            return new ProcessSample(cpuSeconds, peakRss(proc), JavaHeap.residentBytes(pid), threads);
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + proc, e);
        }
    }

    /**
     * A thread's group by its name as Linux keeps it (at most 15 characters): the stream threads of
     * either runtime ({@code <client.id>-StreamThread-<n>}, so a short client id keeps the suffix
     * visible), Kafka's and librdkafka's client threads, RocksDB's, the JVM's collector and compilers;
     * any other thread by its name.
     */
    static String threadGroup(final String name) {
        if (name.contains("-StreamThr") || name.contains("GlobalStre")) {
            return "stream threads";
        }
        if (name.startsWith("kafka-producer")) {
            return "Kafka producer I/O";
        }
        if (name.startsWith("kafka-")) {
            return "other Kafka client threads";
        }
        if (name.startsWith("rdk:broker")) {
            return "librdkafka broker I/O";
        }
        if (name.startsWith("rdk:")) {
            return "librdkafka main and background";
        }
        if (name.startsWith("rocksdb:")) {
            return "RocksDB flush and compaction";
        }
        if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.startsWith("VM Thread")) {
            return "JVM GC and VM";
        }
        if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
            return "JVM JIT";
        }
        // Anything else under its own name, numbers folded, so that no thread's time hides.
        return name.replaceAll("[0-9]+", "#");
    }

    private static double cpuSeconds(final String stat) {
        // Fields after the parenthesised name: state is the 3rd of stat(5), utime the 14th, stime the 15th.
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
    }

    private static long peakRss(final Path proc) throws IOException {
        for (final String line : Files.readAllLines(proc.resolve("status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        throw new IllegalStateException(proc + "/status has no VmHWM");
    }
}
