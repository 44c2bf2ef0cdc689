package dev.sluice.bench.apps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The failover benchmark's checks on a small state, in {@code make test}: on each runtime, with and without a
 * standby replica, the surviving instance takes over and the output ends exactly right, with figures to show for
 * it. The timings themselves mean nothing here.
 */
class FailoverBenchmarkChecksTest {

    @Test
    void theSurvivorCountsEveryWordRightOnEveryRuntime() throws InterruptedException {
        final FailoverSettings small = new FailoverSettings(2_000, 4, 1, List.of(0, 1), 6_000, ChildJvm.SHORT_LIVED,
            List.of(Variant.APACHE, Variant.SLUICE), Path.of("target", "failover-benchmark-checks"),
            Path.of(System.getProperty("sluice.bench.classpaths", "target")));

        final List<FailoverRun.Result> results = FailoverBenchmark.run(small);

        final List<FailoverRun.Result> wrong = results.stream().filter(result -> !result.right()).toList();
        assertTrue(wrong.isEmpty(), () -> wrong.size() + " wrong runs: " + wrong);
        assertEquals(4, results.size());
        for (final FailoverRun.Result result : results) {
            assertTrue(result.firstSeconds() > 0 && result.failoverSeconds() > small.sessionTimeoutMs() / 1000.0 / 2,
                () -> "figures of " + result);
        }
        final String summary = FailoverBenchmark.summary(small, results);
        assertTrue(summary.contains("| Sluice | 1 | 1 of 1 |"), summary);
    }
}
