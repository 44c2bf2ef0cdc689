package dev.sluice.compat.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Poison input and bad records: values no deserializer takes, records without a key into an
 * aggregation and into inner and left joins with a global table, and output records larger than the producer may send, through each built-in
 * deserialization handler and each production handler answer. Kafka Streams' behaviour is the
 * expectation: a handler that continues drops the record, counts it in {@code dropped-records-total}
 * and the rest of the output is exact; one that fails takes the client to ERROR with nothing
 * committed that should not be. With {@code faults.compareWith} each case also runs on the runtimes
 * named there, for the report.
 */
class BadRecordsTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final FaultSettings SETTINGS = FaultSettings.fromSystemProperties();
    private static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration DROPPED_COUNT_TIMEOUT = Duration.ofSeconds(15);
    private static final Duration POLL = Duration.ofMillis(500);
    private static final int PARTITIONS = 3;
    private static final ReportSection REPORT = new ReportSection("Poison input and bad records",
        "An application sums each key's integers (an aggregation: records without a key are dropped), joins each record with"
            + " a global table of labels (inner: records without a key are dropped; left: they are joined with no label) and"
            + " echoes every value as a string (a stateless path) while reading " + SETTINGS.records() + " records, of which every tenth is three bytes"
            + " no integer deserializer takes and every fifteenth of the others has no key; where the case says so, the echo of"
            + " every multiple of " + BadInput.OVERSIZED_EVERY + " is larger than the producer may send. Dropped: the tasks'"
            + " `dropped-records-total` at the end.",
        "Case", "Run on", "Verdict", "Application", "Dropped", "Sums", "Joined", "Left-joined", "Echoes");

    /** One way of meeting the bad records: the handlers, the guarantee, and whether the client must survive them. */
    record Case(String name, String guarantee, String deserializationHandler, String productionHandler, boolean oversizedEchoes,
                boolean survives) {

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        return Stream.of(
            new Case("LogAndContinueExceptionHandler, exactly_once_v2", "exactly_once_v2", "continue", "default", false, true),
            new Case("LogAndFailExceptionHandler, exactly_once_v2", "exactly_once_v2", "fail", "default", false, false),
            new Case("oversized echoes, production handler RESUME, at_least_once", "at_least_once", "continue", "resume", true, true),
            new Case("oversized echoes, production handler RETRY, at_least_once", "at_least_once", "continue", "retry", true, false),
            new Case("oversized echoes, default production handler, at_least_once", "at_least_once", "continue", "default", true, false),
            new Case("oversized echoes, production handler RESUME, exactly_once_v2", "exactly_once_v2", "continue", "resume", true, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void badRecordsAreMetAsKafkaStreamsMeetsThem(final Case badCase) throws InterruptedException {
        final BadInput input = new BadInput(SETTINGS.records());
        for (final Target compared : SETTINGS.comparedRuntimes()) {
            report(badCase, run(badCase, compared, input));
        }
        final Outcome outcome = report(badCase, run(badCase, Target.SLUICE_RUNTIME, input));

        assertTrue(outcome.problems().isEmpty(), outcome.problems() + "; see " + outcome.log());
        if (badCase.survives()) {
            assertEquals(input.droppedRecords(badCase.oversizedEchoes()), outcome.dropped(), "dropped-records-total; see " + outcome.log());
        }
    }

    @AfterAll
    static void writeReport() {
        REPORT.write("5-bad-records.md");
    }

    private static Outcome run(final Case badCase, final Target target, final BadInput input) throws InterruptedException {
        final BadRecordsTopics topics = new BadRecordsTopics(("bad-" + badCase.name() + "-" + target.name())
            .toLowerCase().replaceAll("[^a-z0-9]+", "-"));
        final Path runDir = RunDirectories.fresh(Path.of("target", "bad-records", topics.prefix()));
        BROKER.createTopic(topics.input(), PARTITIONS);
        topics.outputs().forEach(topic -> BROKER.createTopic(topic, PARTITIONS));
        BROKER.createTopic(topics.labels(), PARTITIONS);
        input.writeLabels(BROKER.bootstrapServers(), topics.labels());
        input.write(BROKER.bootstrapServers(), topics.input());

        final Map<String, List<Long>> expectedSums = input.sums();
        final List<String> expectedEchoes = input.echoes(badCase.oversizedEchoes());
        final ChildJvm app = BadRecordsApp.launch(target, runDir.resolve("app.log"), List.of(BROKER.bootstrapServers(), target.name(),
            topics.prefix(), runDir.resolve("state").toString(), badCase.guarantee(), badCase.deserializationHandler(),
            badCase.productionHandler(), badCase.oversizedEchoes() ? "oversized" : "fitting"));
        try {
            final long expectedSumRecords = expectedSums.values().stream().mapToLong(List::size).sum();
            // A case that must fail is watched until it does: its output may be complete before the failure shows.
            final BooleanSupplier caughtUp = () -> badCase.survives()
                && sumRecords(topics) >= expectedSumRecords && echoes(topics).size() >= expectedEchoes.size()
                && strings(topics.joined()).size() >= input.joined().size()
                && strings(topics.leftJoined()).size() >= input.leftJoined().size();
            final long deadline = System.nanoTime() + RUN_TIMEOUT.toNanos();
            boolean ended = false;
            while (!ended && System.nanoTime() < deadline) {
                ended = ChildOutput.reachedError(app.lines()) || !app.isAlive() || caughtUp.getAsBoolean();
                if (!ended) {
                    Thread.sleep(POLL.toMillis());
                }
            }
            final boolean failed = ChildOutput.reachedError(app.lines()) || !app.isAlive();
            if (!failed && badCase.survives()) {
                final String dropped = "DROPPED " + input.droppedRecords(badCase.oversizedEchoes());
                app.awaitOutput(lines -> lines.contains(dropped), DROPPED_COUNT_TIMEOUT);
            }
            return outcome(badCase, target, topics, input, ended, failed, app);
        } finally {
            app.stop();
        }
    }

    private static Outcome outcome(final Case badCase, final Target target, final BadRecordsTopics topics, final BadInput input,
                                   final boolean ended, final boolean failed, final ChildJvm app) {
        final Map<String, List<Long>> sums = CommittedTopic.read(BROKER.bootstrapServers(), topics.sums(), CommittedTopic::longValue);
        final List<String> echoes = echoes(topics);
        final List<String> joined = strings(topics.joined());
        final List<String> leftJoined = strings(topics.leftJoined());
        final List<String> problems = new ArrayList<>();
        if (!ended) {
            problems.add((badCase.survives() ? "did not catch up" : "did not fail") + " within " + RUN_TIMEOUT.toSeconds() + " s");
        } else if (failed == badCase.survives()) {
            problems.add(failed ? "failed: " + ChildOutput.failure(app.lines()) : "kept running");
        }
        problems.addAll(sumMismatches(input.sums(), sums, !failed));
        problems.addAll(valueMismatches("echo", input.echoes(badCase.oversizedEchoes()), echoes, !failed));
        problems.addAll(valueMismatches("inner join", input.joined(), joined, !failed));
        problems.addAll(valueMismatches("left join", input.leftJoined(), leftJoined, !failed));
        final String application = failed ? "failed: " + ChildOutput.failure(app.lines()) : "kept running";
        return new Outcome(target, problems, application, lastDropped(app.lines()), sums.values().stream().mapToLong(List::size).sum(),
            joined.size(), leftJoined.size(), echoes.size(), app.log());
    }

    /** Each key's sums must be the expected ones, all of them when the client kept running, a prefix when it failed. */
    private static List<String> sumMismatches(final Map<String, List<Long>> expected, final Map<String, List<Long>> actual,
                                              final boolean complete) {
        final List<String> mismatches = new ArrayList<>();
        actual.keySet().stream().filter(key -> !expected.containsKey(key))
            .forEach(key -> mismatches.add("sums for key " + key + ", which no record with an integer had"));
        expected.forEach((key, sums) -> {
            final List<Long> written = actual.getOrDefault(key, List.of());
            final boolean prefix = written.size() <= sums.size() && sums.subList(0, written.size()).equals(written);
            if (!prefix || complete && written.size() != sums.size()) {
                mismatches.add("key " + key + ": sums " + abbreviated(written) + ", the input gives " + abbreviated(sums));
            }
        });
        return mismatches;
    }

    /**
     * The values of an output ({@code what}: echoes, joins) must be the expected ones, each once: all of them when the
     * client kept running, some when it failed.
     */
    private static List<String> valueMismatches(final String what, final List<String> expected, final List<String> actual,
                                                final boolean complete) {
        final List<String> mismatches = new ArrayList<>();
        final Set<String> expectedSet = new HashSet<>(expected);
        final Set<String> seen = new HashSet<>();
        for (final String echo : actual) {
            if (!expectedSet.contains(echo)) {
                mismatches.add("a " + what + " of " + abbreviated(echo) + ", which should not have been written");
            } else if (!seen.add(echo)) {
                mismatches.add("the " + what + " " + echo + " twice");
            }
        }
        if (complete && seen.size() != expectedSet.size()) {
            final List<String> missing = new ArrayList<>(expectedSet);
            missing.removeAll(seen);
            Collections.sort(missing);
            mismatches.add((expectedSet.size() - seen.size()) + " of " + what + " missing, e.g. " + abbreviated(missing));
        }
        return mismatches;
    }

    private static long sumRecords(final BadRecordsTopics topics) {
        return CommittedTopic.read(BROKER.bootstrapServers(), topics.sums(), CommittedTopic::longValue).values().stream()
            .mapToLong(List::size).sum();
    }

    private static List<String> echoes(final BadRecordsTopics topics) {
        return strings(topics.echoes());
    }

    private static List<String> strings(final String topic) {
        return CommittedTopic.values(BROKER.bootstrapServers(), topic, bytes -> new String(bytes, StandardCharsets.UTF_8));
    }

    private static long lastDropped(final List<String> lines) {
        long dropped = 0;
        for (final String line : lines) {
            if (line.startsWith("DROPPED ")) {
                dropped = Long.parseLong(line.substring("DROPPED ".length()));
            }
        }
        return dropped;
    }

    private static String abbreviated(final Object value) {
        final String text = String.valueOf(value);
        return text.length() <= 80 ? text : text.substring(0, 77) + "...";
    }

    private static Outcome report(final Case badCase, final Outcome outcome) {
        REPORT.row(badCase.name(), outcome.target().description(), outcome.problems().isEmpty() ? "exact" : String.join("; ", outcome.problems()),
            outcome.application(), outcome.dropped(), outcome.sumRecords(), outcome.joined(), outcome.leftJoined(), outcome.echoes());
        return outcome;
    }

    /** What one run saw, and what in it differs from Kafka Streams' behaviour. */
    record Outcome(Target target, List<String> problems, String application, long dropped, long sumRecords, long joined,
                   long leftJoined, long echoes, Path log) {
    }
}
