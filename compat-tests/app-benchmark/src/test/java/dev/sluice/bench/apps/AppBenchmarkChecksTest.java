package dev.sluice.bench.apps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's correctness checks on a small input, in {@code make test}: every workload runs once
 * timed and once paced on every runtime, and every run's output must be exactly what its input must
 * leave, with figures to show for it. The timings themselves mean nothing here.
 */
class AppBenchmarkChecksTest {

    @Test
    void everyWorkloadLeavesTheExpectedOutputOnEveryRuntime() throws InterruptedException {
        final BenchSettings small = new BenchSettings(
            Map.of(Application.WORD_COUNT, 2_000, Application.WINDOWED_TOTALS, 4_000, Application.ORDER_ENRICHMENT, 2_000,
                Application.ORDER_CUSTOMERS, 800),
            4, 1, 1, 3, 300, 1, ChildJvm.SHORT_LIVED, Workload.ALL, List.of(Variant.values()), Map.of(), Path.of("target", "app-benchmark-checks"),
            Path.of(System.getProperty("sluice.bench.classpaths", "target")));
        final Report report = AppBenchmark.run(small);

        final List<RunResult> wrong = report.results().stream().filter(result -> !result.right()).toList();
        assertTrue(wrong.isEmpty(), () -> wrong.size() + " wrong runs: " + wrong.stream()
            .map(result -> result.workload().id() + " on " + result.variant().description() + ": " + result.failure()).toList());
        // Five exactly-once workloads on three runtimes and one at-least-once on two, timed and paced.
        assertEquals(2 * (5 * 3 + 2), report.results().size());
        for (final RunResult result : report.results()) {
            assertTrue(result.sample().cpuSeconds() > 0 && result.sample().peakRssBytes() > 0, () -> "no figures for " + result);
            assertTrue(result.sample().heapResidentBytes() > 0
                && result.sample().heapResidentBytes() < result.sample().peakRssBytes(), () -> "no Java heap within " + result);
            assertTrue(result.startSeconds() > 0, () -> "no start-up time for " + result);
            if (!result.paced()) {
                assertTrue(result.startSeconds() < result.wallSeconds(), () -> "started after it ended: " + result);
            }
            if (result.paced()) {
                assertTrue(result.latenciesMillis().length > 0, () -> "no latencies measured for " + result);
            }
        }
        final String summary = report.summary(small.workloads(), small.workDir().resolve("REPORT.md"));
        assertTrue(summary.contains("Sluice ÷ better Apache"), summary);
    }
}
