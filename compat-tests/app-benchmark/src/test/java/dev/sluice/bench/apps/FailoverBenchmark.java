package dev.sluice.bench.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@code make bench-failover}: how long an application takes to process everything again after one of its two
 * instances is killed, with and without a standby replica, on Apache Kafka Streams and on Sluice, runs
 * alternated between the runtimes ({@link FailoverRun}). Prints a line per run and a table of medians, also
 * written to {@code REPORT.md} in the work directory.
 *
 * <pre>FailoverBenchmark &lt;class path directory&gt; &lt;work directory&gt;</pre>
 */
public final class FailoverBenchmark {

    private FailoverBenchmark() {
    }

    public static void main(final String[] args) throws InterruptedException {
        if (args.length != 2) {
            System.err.println("arguments: <class path directory> <work directory>");
            System.exit(2);
        }
        final FailoverSettings settings = FailoverSettings.fromEnvironment(Path.of(args[1]), Path.of(args[0]));
        final List<FailoverRun.Result> results = run(settings);
        System.out.println();
        System.out.println(summary(settings, results));
        if (results.stream().anyMatch(result -> !result.right())) {
            System.out.println("Some runs were wrong; see the lines above.");
            System.exit(1);
        }
    }

    /** Every run of {@code settings}: each round, each number of standbys, the runtimes in turn. */
    static List<FailoverRun.Result> run(final FailoverSettings settings) throws InterruptedException {
        final List<FailoverRun.Result> results = new ArrayList<>();
        final int planned = settings.rounds() * settings.standbyReplicas().size() * settings.runtimes().size();
        try (BenchBroker broker = new BenchBroker()) {
            System.out.printf("failover: %,d keys over %d partitions, two instances, one killed%n", settings.keys(),
                settings.partitions());
            for (int round = 0; round < settings.rounds(); round++) {
                for (final int standbys : settings.standbyReplicas()) {
                    for (int turn = 0; turn < settings.runtimes().size(); turn++) {
                        final Variant variant = settings.runtimes().get((round + turn) % settings.runtimes().size());
                        final FailoverRun.Result result =
                            new FailoverRun(broker, settings, variant, standbys, results.size() + 1).run();
                        results.add(result);
                        System.out.printf(Locale.ROOT, "[%d/%d] %-30s standby replicas %d  %s%n", results.size(), planned,
                            variant.description(), standbys, result.right()
                                ? String.format(Locale.ROOT, "first input %.1f s, failover %.1f s", result.firstSeconds(),
                                    result.failoverSeconds())
                                : "WRONG, not timed: " + result.failure());
                    }
                }
            }
        }
        return results;
    }

    /** The medians of the right runs per runtime and number of standbys, as Markdown; also written to REPORT.md. */
    static String summary(final FailoverSettings settings, final List<FailoverRun.Result> results) {
        final StringBuilder out = new StringBuilder(String.format(Locale.ROOT, "# Failover benchmark: medians of right runs%n%n"
            + "%,d keys of state over %d partitions, two instances; the group notices the killed one after its "
            + "session timeout (%d ms, every run).%n%n| runtime | standby replicas | right runs | first input s | "
            + "failover s |%n|---|---|---|---|---|%n", settings.keys(), settings.partitions(), settings.sessionTimeoutMs()));
        for (final int standbys : settings.standbyReplicas()) {
            for (final Variant variant : settings.runtimes()) {
                final List<FailoverRun.Result> runs = results.stream()
                    .filter(result -> result.variant() == variant && result.standbyReplicas() == standbys).toList();
                final List<FailoverRun.Result> right = runs.stream().filter(FailoverRun.Result::right).toList();
                out.append(String.format(Locale.ROOT, "| %s | %d | %d of %d | %s | %s |%n", variant.description(), standbys,
                    right.size(), runs.size(), median(right.stream().mapToDouble(FailoverRun.Result::firstSeconds).toArray()),
                    median(right.stream().mapToDouble(FailoverRun.Result::failoverSeconds).toArray())));
            }
        }
        try {
            Files.createDirectories(settings.workDir());
            Files.writeString(settings.workDir().resolve("REPORT.md"), out);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toString();
    }

    private static String median(final double[] values) {
        if (values.length == 0) {
            return "–";
        }
        Arrays.sort(values);
        final double median = values.length % 2 == 1 ? values[values.length / 2]
            : (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
        return String.format(Locale.ROOT, "%.1f", median);
    }
}
