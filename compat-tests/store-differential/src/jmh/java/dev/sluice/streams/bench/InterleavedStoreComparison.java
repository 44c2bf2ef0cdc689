package dev.sluice.streams.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.function.Consumer;
import org.openjdk.jmh.infra.Blackhole;

/**
 * {@link KeyValueStoreBenchmark}'s operations on both stores in one JVM, in short alternating rounds,
 * reporting the median per-operation thread CPU time and wall time of each and their ratio.
 *
 * <p>JMH measures the two stores minutes apart; on a shared machine a change of load between them
 * decides the ratio. Alternating rounds expose both stores to the same load, and thread CPU time
 * leaves out the time the thread waited for a core. Run after JMH by {@code make bench-stores};
 * argument: rounds per operation (default 21).
 */
public final class InterleavedStoreComparison {

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final String[] STORES = {"kafka-streams", "sluice"};

    private InterleavedStoreComparison() {
    }

    public static void main(final String[] args) throws Exception {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        final Blackhole blackhole = new Blackhole(
            "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
        final KeyValueStoreBenchmark[] benchmarks = new KeyValueStoreBenchmark[STORES.length];
        for (int i = 0; i < STORES.length; i++) {
            benchmarks[i] = new KeyValueStoreBenchmark();
            benchmarks[i].store = STORES[i];
            benchmarks[i].openAndFill();
        }
        try {
            System.out.printf("%-6s %-14s %14s %14s%n", "op", "store", "cpu ns/op", "wall ns/op");
            compare("get", benchmark -> blackhole.consume(benchmark.get()), benchmarks, 20_000, rounds);
            compare("put", KeyValueStoreBenchmark::put, benchmarks, 20_000, rounds);
            compare("range", benchmark -> benchmark.range(blackhole), benchmarks, 500, rounds);
        } finally {
            for (final KeyValueStoreBenchmark benchmark : benchmarks) {
                benchmark.close();
            }
        }
    }

    private static void compare(final String operation, final Consumer<KeyValueStoreBenchmark> op,
                                final KeyValueStoreBenchmark[] benchmarks, final int opsPerRound, final int rounds) {
        for (int warmup = 0; warmup < 5; warmup++) {
            for (final KeyValueStoreBenchmark benchmark : benchmarks) {
                repeat(op, benchmark, opsPerRound);
            }
        }
        final double[][] cpu = new double[benchmarks.length][rounds];
        final double[][] wall = new double[benchmarks.length][rounds];
        for (int round = 0; round < rounds; round++) {
            for (int store = 0; store < benchmarks.length; store++) {
                final long cpuStart = THREADS.getCurrentThreadCpuTime();
                final long wallStart = System.nanoTime();
                repeat(op, benchmarks[store], opsPerRound);
                cpu[store][round] = (THREADS.getCurrentThreadCpuTime() - cpuStart) / (double) opsPerRound;
                wall[store][round] = (System.nanoTime() - wallStart) / (double) opsPerRound;
            }
        }
        for (int store = 0; store < benchmarks.length; store++) {
            System.out.printf("%-6s %-14s %14.0f %14.0f%n", operation, STORES[store], median(cpu[store]), median(wall[store]));
        }
        System.out.printf("%-6s %-14s %14.2f %14.2f%n", operation, "sluice/kafka", median(cpu[1]) / median(cpu[0]),
            median(wall[1]) / median(wall[0]));
    }

    private static void repeat(final Consumer<KeyValueStoreBenchmark> op, final KeyValueStoreBenchmark benchmark, final int times) {
        for (int i = 0; i < times; i++) {
            op.accept(benchmark);
        }
    }

    private static double median(final double[] values) {
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
