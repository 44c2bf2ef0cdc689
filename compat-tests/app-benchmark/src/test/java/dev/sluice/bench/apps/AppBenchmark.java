package dev.sluice.bench.apps;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code make bench-apps}: every workload on every runtime against one local broker, the timed runs
 * over the same pre-produced input, then the paced runs; runs alternate between the runtimes, each
 * round starting with the next one. Prints a line per run and the tables of medians, and writes
 * them to {@code REPORT.md} in the work directory.
 *
 * <pre>AppBenchmark &lt;class path directory&gt; &lt;work directory&gt;</pre>
 */
public final class AppBenchmark {

    // Timed inputs: how far apart the events are in event time; windows need a realistic spread.
    private static final Map<Application, Long> TIMED_STEP_MILLIS = Map.of(Application.WORD_COUNT, 1L,
        Application.WINDOWED_TOTALS, 3L, Application.ORDER_ENRICHMENT, 1L, Application.ORDER_CUSTOMERS, 1L);
    // A paced event-time run moves its event time this many times faster than the wall clock, so that
    // windows close during the run.
    private static final long PACED_EVENT_TIME_SPEEDUP = 20;

    private AppBenchmark() {
    }

    public static void main(final String[] args) throws InterruptedException {
        if (args.length != 2) {
            System.err.println("arguments: <class path directory> <work directory>");
            System.exit(2);
        }
        final BenchSettings settings = BenchSettings.fromEnvironment(Path.of(args[1]), Path.of(args[0]));
        final Report report = run(settings);
        System.out.println();
        System.out.println(report.summary(settings.workloads(), settings.workDir().resolve("REPORT.md")));
        if (report.results().stream().anyMatch(result -> !result.right())) {
            System.out.println("Some runs were wrong; see the lines above.");
            System.exit(1);
        }
    }

    /** Runs every workload of {@code settings} and returns the report of the runs. */
    static Report run(final BenchSettings settings) throws InterruptedException {
        final Report report = new Report(plannedRuns(settings));
        int runNumber = 0;
        try (BenchBroker broker = new BenchBroker()) {
            final Map<Application, Input> inputs = new HashMap<>();
            final Map<Application, Map<String, String>> expected = new HashMap<>();
            final Map<Application, Map<TopicPartition, Long>> inputEnds = new HashMap<>();
            for (final Application application : applications(settings)) {
                final int size = settings.size(application);
                final long step = TIMED_STEP_MILLIS.get(application);
                final Input input = application.input(size, settings.partitions(), hourAgo() - size * step, step);
                inputEnds.put(application, broker.writeInput(input, application.inputTopics(), settings.partitions()));
                inputs.put(application, input);
                expected.put(application, application.expected(input));
                System.out.printf("%s: %,d input records, %,d output keys%n", application.id(), input.size(),
                    expected.get(application).size());
            }
            for (int round = 0; round < settings.rounds(); round++) {
                for (final Workload workload : settings.workloads()) {
                    for (final Variant variant : alternated(settings, workload, round)) {
                        final Application application = workload.application();
                        report.add(new BenchRun(broker, settings, workload, variant, ++runNumber)
                            .timed(inputs.get(application), expected.get(application), inputEnds.get(application)));
                    }
                }
            }
            for (int round = 0; round < settings.pacedRounds(); round++) {
                for (final Workload workload : settings.workloads()) {
                    final Application application = workload.application();
                    final int size = settings.pacedRate() * settings.pacedSeconds();
                    final long step = application.eventTime() ? PACED_EVENT_TIME_SPEEDUP * 1000 / settings.pacedRate() : 1;
                    final Input input = application.input(size, settings.partitions(), hourAgo() - size * step, step);
                    final Map<String, String> pacedExpected = application.expected(input);
                    for (final Variant variant : alternated(settings, workload, round)) {
                        broker.recreateTopics(application.inputTopics(), settings.partitions());
                        report.add(new BenchRun(broker, settings, workload, variant, ++runNumber).paced(input, pacedExpected));
                    }
                }
            }
        }
        return report;
    }

    private static List<Application> applications(final BenchSettings settings) {
        return List.copyOf(new LinkedHashSet<>(settings.workloads().stream().map(Workload::application).toList()));
    }

    /** The runtimes for {@code workload}, the {@code round}th first. */
    private static List<Variant> alternated(final BenchSettings settings, final Workload workload, final int round) {
        final List<Variant> variants = new ArrayList<>(settings.runtimes().stream()
            .filter(variant -> variant.appliesTo(workload.processingGuarantee())).toList());
        Collections.rotate(variants, -round);
        return variants;
    }

    private static int plannedRuns(final BenchSettings settings) {
        final int perRound = settings.workloads().stream().mapToInt(workload -> alternated(settings, workload, 0).size()).sum();
        return perRound * (settings.rounds() + settings.pacedRounds());
    }

    /** An hour ago: input timestamps end there, in the past, where the broker accepts them. */
    private static long hourAgo() {
        return System.currentTimeMillis() - 3_600_000L;
    }
}
