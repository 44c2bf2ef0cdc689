package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.faults.OutageRun.OutageResult;
import dev.sluice.streams.testing.broker.BrokerOptions;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A broker that goes away: frozen while the application runs under exactly_once_v2, for longer than
 * its session and transaction timeouts (10 s), then back with its data. The application, a dynamic
 * group member, recovers by itself and the counts stay exact. {@code faults.outageSeconds} sets the
 * outages (30 s by default; {@code make soak} adds a 3-minute one). When other runtimes are compared
 * ({@code make soak}), the application also runs as a static member, which must come through as
 * exactly: its consumer is fenced out of the group on the way (the README's compatibility table says
 * how Sluice answers that).
 */
class BrokerOutageTest {

    /**
     * The single node is its own controller, frozen with it: back, the controller would find the broker's session
     * expired and fence it, leaving every partition without a leader for a moment. A transaction the coordinator
     * aborts then (its timeout passed during the outage) completes without a marker in any partition, Kafka's
     * coordinator taking partitions without a leader for deleted ones, and the producer's next transaction commits
     * the aborted records with its own. That is the broker's doing, on any client; the test is about the
     * application, so the broker's session outlasts the outages (the longest, in {@code make soak}, is 3 minutes).
     */
    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker(BrokerOptions.defaults()
        .withServerProperty("broker.session.timeout.ms", Long.toString(Duration.ofMinutes(10).toMillis())));

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final ReportSection REPORT = new ReportSection("The broker goes away",
        "The min/sum/max/count application under exactly_once_v2 runs while " + SETTINGS.records() + " records are written;"
            + " 3 s in, the broker is frozen (SIGSTOP: no connection, no answer) for the outage, then goes on with its data."
            + " Caught up: from the broker's return until the committed output matches the committed input.",
        "Run on", "Group member", "Outage", "Verdict", "Application", "Caught up");

    @Test
    void theApplicationRecoversByItselfAndCountsStayExact() throws InterruptedException {
        final long seed = Long.getLong("faults.seed", System.nanoTime());
        final OutageRun run = new OutageRun(BROKER, SETTINGS.records(), Path.of("target", "outage"));
        for (final String seconds : System.getProperty("faults.outageSeconds", "30").split(",")) {
            final Duration outage = Duration.ofSeconds(Long.parseLong(seconds.trim()));
            for (final Target compared : SETTINGS.comparedRuntimes()) {
                report(run.run(compared, outage, false, seed));
                report(run.run(compared, outage, true, seed));
            }
            final List<OutageResult> sluiceRuns = new ArrayList<>();
            if (!SETTINGS.comparedRuntimes().isEmpty()) {
                sluiceRuns.add(report(run.run(Target.SLUICE_RUNTIME, outage, true, seed)));
            }
            sluiceRuns.add(report(run.run(Target.SLUICE_RUNTIME, outage, false, seed)));
            for (final OutageResult result : sluiceRuns) {
                assertTrue(result.exact(), (result.staticMember() ? "static member: " : "dynamic member: ") + result.recovery() + ", "
                    + result.verification().mismatches() + " (seed " + seed + "); see " + result.log());
            }
        }
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("2-broker-outage.md");
    }

    private static OutageResult report(final OutageResult result) {
        REPORT.row(result.target().description(), result.staticMember() ? "static" : "dynamic", result.outage().toSeconds() + " s", result.verdict(), result.recovery(),
            result.caughtUp().toMillis() + " ms");
        return result;
    }
}
