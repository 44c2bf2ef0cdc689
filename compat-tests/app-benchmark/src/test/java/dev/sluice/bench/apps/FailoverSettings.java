package dev.sluice.bench.apps;

import java.nio.file.Path;
import java.util.List;

/**
 * What {@code make bench-failover} runs: a word count whose state holds {@code keys} keys, on two instances
 * over topics of {@code partitions} partitions, on each runtime with each number of standby replicas,
 * {@code rounds} times, alternated.
 *
 * @param sessionTimeoutMs how long the group waits for a killed instance before moving its tasks; the same for
 *                         every run, so that the figures differ by what the runtimes do after
 */
record FailoverSettings(int keys, int partitions, int rounds, List<Integer> standbyReplicas, int sessionTimeoutMs,
                        List<String> jvmOptions, List<Variant> runtimes, Path workDir, Path classpathDir) {

    /**
     * The defaults, each changed by its variable: {@code SLUICE_FAILOVER_KEYS} (1,000,000),
     * {@code SLUICE_FAILOVER_ROUNDS} (1), {@code SLUICE_BENCH_PARTITIONS} (4), {@code SLUICE_BENCH_JVM_OPTS}
     * and {@code SLUICE_BENCH_RUNTIMES} as for {@code make bench-apps}.
     */
    static FailoverSettings fromEnvironment(final Path workDir, final Path classpathDir) {
        return new FailoverSettings(BenchSettings.number("SLUICE_FAILOVER_KEYS", 1_000_000),
            BenchSettings.number("SLUICE_BENCH_PARTITIONS", 4), BenchSettings.number("SLUICE_FAILOVER_ROUNDS", 1),
            List.of(0, 1), 10_000,
            List.of(System.getenv().getOrDefault(BenchSettings.JVM_OPTIONS, "-Xmx2g").trim().split("\\s+")),
            BenchSettings.selection("SLUICE_BENCH_RUNTIMES", List.of(Variant.APACHE, Variant.SLUICE), Variant::id),
            workDir, classpathDir);
    }
}
