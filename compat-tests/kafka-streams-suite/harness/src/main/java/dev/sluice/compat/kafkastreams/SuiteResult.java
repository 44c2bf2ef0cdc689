package dev.sluice.compat.kafkastreams;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One suite's outcomes on both targets, and what they mean. A test is not runnable against a
 * replacement when its class tests Kafka Streams' own store implementations, when it is one of the
 * listed tests that check which store classes a topology got, when it fails on the baseline
 * with a linkage error (it needs an API of the tests' Kafka version that 4.4.0 lacks), or when it
 * fails on the baseline because it needs more than the single-node local broker; a class that fails
 * so in its set-up is one not-runnable entry, with what it asked for.
 */
record SuiteResult(Suite suite, List<String> classes, Map<String, String> notRunnableClasses,
                   Set<String> storeClassChecks, Run baseline, Run sluice) {

    /**
     * One target's outcomes and how long the run took, with the class path entry each of
     * {@link CompatRun#RUNTIME_CLASSES} came from.
     */
    record Run(List<TestOutcome> outcomes, long seconds, Map<String, String> runtimeOrigins) {
        /** The outcomes by {@link TestOutcome#key()}. */
        Map<String, TestOutcome> byKey() {
            return outcomes.stream().collect(Collectors.toMap(TestOutcome::key, Function.identity(), (a, b) -> a,
                LinkedHashMap::new));
        }

        /** Whether the run has outcomes of {@code testClass} and went through it to its end. */
        boolean finished(final String testClass) {
            final List<TestOutcome> ofClass = outcomes.stream()
                .filter(test -> testClass(test.id()).equals(testClass)).toList();
            return !ofClass.isEmpty() && ofClass.stream().noneMatch(TestOutcome::wholeClass);
        }

        /** The same run with only the outcomes {@code belongs} accepts. */
        Run only(final Predicate<TestOutcome> belongs) {
            return new Run(outcomes.stream().filter(belongs).toList(), seconds, runtimeOrigins);
        }
    }

    /** Counts for one column of the report. */
    record Counts(int run, int passed, int failed, int skipped, int notRunnable) {
    }

    static final String STORE_CLASS_CHECK = "checks which of Kafka Streams' own store classes the topology got";
    static final String NEEDS_MORE_BROKERS = "needs more than the single-node local broker (replicas on several "
        + "brokers, or settings it cannot take)";
    /** How the integration suite's stand-in cluster (local-cluster) starts the message of such a failure. */
    private static final String LOCAL_BROKER_MARKER = "[not runnable on the single-node local broker]";
    private static final Pattern TEST_CLASS = Pattern.compile("\\[class:([^\\]]+)]");
    private static final Set<String> LINKAGE_ERRORS = Set.of(
        "java.lang.NoSuchMethodError", "java.lang.NoSuchFieldError", "java.lang.NoClassDefFoundError",
        "java.lang.AbstractMethodError", "java.lang.IncompatibleClassChangeError", "java.lang.ClassNotFoundException");

    /**
     * This result as the report's rows count it: for a suite with streams-protocol invocations, the other
     * outcomes as the suite's own and those invocations apart, as {@link Suite#streamsProtocolRows()};
     * otherwise just this. An outcome of a whole class (its set-up failed, or its JVM was ended) is not an
     * invocation and stays with the suite's own.
     */
    List<SuiteResult> rows() {
        if (suite.streamsProtocol().isEmpty()) {
            return List.of(this);
        }
        final Pattern pattern = suite.streamsProtocol().get();
        final Predicate<TestOutcome> streamsProtocol = test -> pattern.matcher(test.name()).find();
        return List.of(only(suite, streamsProtocol.negate()), only(suite.streamsProtocolRows(), streamsProtocol));
    }

    private SuiteResult only(final Suite rows, final Predicate<TestOutcome> belongs) {
        return new SuiteResult(rows, classes, notRunnableClasses, storeClassChecks, baseline.only(belongs),
            sluice.only(belongs));
    }

    /** Why the test cannot judge a replacement, or empty when it can. */
    Optional<String> notRunnableReason(final TestOutcome test) {
        final String reason = notRunnableClasses.get(testClass(test.id()));
        if (reason != null) {
            return Optional.of(reason);
        }
        if (storeClassChecks.contains(test.name().split(" ")[0])) {
            return Optional.of(STORE_CLASS_CHECK);
        }
        final TestOutcome onBaseline = baseline.byKey().get(test.key());
        if (onBaseline != null && onBaseline.status() == TestOutcome.Status.FAILED
            && LINKAGE_ERRORS.contains(onBaseline.failureType())) {
            return Optional.of("needs an API Kafka Streams 4.4.0 lacks: " + onBaseline.message());
        }
        if (onBaseline != null && onBaseline.status() == TestOutcome.Status.FAILED
            && onBaseline.message().contains(LOCAL_BROKER_MARKER)) {
            // A whole class that cannot start says what it asked for: it is listed alone, with that.
            return Optional.of(test.wholeClass() ? NEEDS_MORE_BROKERS + ":" + onBaseline.message()
                .substring(onBaseline.message().indexOf(LOCAL_BROKER_MARKER) + LOCAL_BROKER_MARKER.length())
                : NEEDS_MORE_BROKERS);
        }
        return Optional.empty();
    }

    Counts counts(final Run run) {
        int passed = 0;
        int failed = 0;
        int skipped = 0;
        int notRunnable = 0;
        for (final TestOutcome test : run.outcomes()) {
            if (notRunnableReason(test).isPresent()) {
                notRunnable++;
                continue;
            }
            switch (test.status()) {
                case PASSED -> passed++;
                case FAILED -> failed++;
                case SKIPPED -> skipped++;
            }
        }
        return new Counts(passed + failed + skipped, passed, failed, skipped, notRunnable);
    }

    /**
     * Runnable tests that fail (or are missing) on Sluice although they pass on the baseline. An invocation
     * known by its parameters that is missing from a class Sluice's run went through was not drawn there.
     */
    List<TestOutcome> regressions() {
        final Map<String, TestOutcome> onSluice = sluice.byKey();
        final List<TestOutcome> regressions = new ArrayList<>();
        for (final TestOutcome test : baseline.outcomes()) {
            if (test.status() == TestOutcome.Status.PASSED && notRunnableReason(test).isEmpty()) {
                final TestOutcome there = onSluice.get(test.key());
                if (there == null && test.keyedByParameters() && sluice.finished(testClass(test.id()))) {
                    continue;
                }
                if (there == null || there.status() != TestOutcome.Status.PASSED) {
                    regressions.add(there != null ? there
                        : new TestOutcome(test.id(), test.name(), TestOutcome.Status.FAILED, "did not run on Sluice"));
                }
            }
        }
        return regressions;
    }

    static List<TestOutcome> runnableFailures(final SuiteResult result, final Run run) {
        return run.outcomes().stream()
            .filter(test -> test.status() == TestOutcome.Status.FAILED && result.notRunnableReason(test).isEmpty())
            .toList();
    }

    /** Not-runnable tests by reason, each reason with the tests it covers. */
    Map<String, List<TestOutcome>> notRunnableByReason() {
        final Map<String, List<TestOutcome>> byReason = new LinkedHashMap<>();
        for (final TestOutcome test : baseline.outcomes()) {
            notRunnableReason(test).ifPresent(reason -> {
                final String classReason = notRunnableClasses.get(testClass(test.id()));
                final String key = classReason != null ? simpleName(testClass(test.id())) + ": " + classReason
                    : test.wholeClass() ? test.name() + ": " + reason : reason;
                byReason.computeIfAbsent(key, k -> new ArrayList<>()).add(test);
            });
        }
        return byReason;
    }

    static String testClass(final String uniqueId) {
        final Matcher matcher = TEST_CLASS.matcher(uniqueId);
        return matcher.find() ? matcher.group(1) : "";
    }

    private static String simpleName(final String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }
}
