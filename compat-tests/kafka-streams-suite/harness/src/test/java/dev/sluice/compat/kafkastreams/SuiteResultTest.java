package dev.sluice.compat.kafkastreams;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** How the integration suite's outcomes are counted: streams-protocol rows apart, classes that cannot start. */
class SuiteResultTest {

    private static final String CLASS = "[engine:junit-jupiter]/[class:org.apache.kafka.streams.integration.";

    @Test
    void streamsProtocolInvocationsAreCountedInRowsOfTheirOwn() {
        final List<TestOutcome> apache = List.of(
            passed("EosIntegrationTest", "shouldCommit [1] groupProtocol=classic"),
            passed("EosIntegrationTest", "shouldCommit [2] groupProtocol=streams"),
            passed("IQv2IntegrationTest", "shouldQuery STREAMS protocol"),
            passed("RestoreIntegrationTest", "shouldRestore [1] useNewProtocol=false"),
            passed("RestoreIntegrationTest", "shouldRestore [2] useNewProtocol=true"),
            passed("StoreQueryIntegrationTest", "shouldQuery"),
            passed("InternalTopicIntegrationTest", "shouldCompact [1] streamsProtocolEnabled=true"),
            passed("StreamsUncaughtExceptionHandlerIntegrationTest",
                "shouldReplace [2] streamsRebalanceProtocolEnabled=true"),
            passed("IQv2EndpointToPartitionsIntegrationTest", "shouldGet [3] STREAMS protocol No standby"));
        final List<TestOutcome> sluice = List.of(
            passed("EosIntegrationTest", "shouldCommit [1] groupProtocol=classic"),
            failed("EosIntegrationTest", "shouldCommit [2] groupProtocol=streams", "timed out"),
            failed("IQv2IntegrationTest", "shouldQuery STREAMS protocol", "timed out"),
            failed("RestoreIntegrationTest", "shouldRestore [1] useNewProtocol=false", "lag"),
            passed("RestoreIntegrationTest", "shouldRestore [2] useNewProtocol=true"),
            passed("StoreQueryIntegrationTest", "shouldQuery"));

        final List<SuiteResult> rows = result(apache, sluice).rows();

        assertEquals(List.of("kafka-streams-integration", "kafka-streams-integration (streams protocol)"),
            rows.stream().map(row -> row.suite().name()).toList());
        final SuiteResult classic = rows.get(0);
        final SuiteResult streams = rows.get(1);
        assertEquals(new SuiteResult.Counts(3, 3, 0, 0, 0), classic.counts(classic.baseline()));
        assertEquals(new SuiteResult.Counts(3, 2, 1, 0, 0), classic.counts(classic.sluice()));
        assertEquals(List.of("RestoreIntegrationTest.shouldRestore [1] useNewProtocol=false"),
            classic.regressions().stream().map(TestOutcome::name).toList());
        assertEquals(new SuiteResult.Counts(6, 6, 0, 0, 0), streams.counts(streams.baseline()));
        assertEquals(new SuiteResult.Counts(3, 1, 2, 0, 0), streams.counts(streams.sluice()));
        assertEquals(List.of("EosIntegrationTest.shouldCommit [2] groupProtocol=streams",
                "IQv2IntegrationTest.shouldQuery STREAMS protocol",
                "InternalTopicIntegrationTest.shouldCompact [1] streamsProtocolEnabled=true",
                "StreamsUncaughtExceptionHandlerIntegrationTest.shouldReplace [2] streamsRebalanceProtocolEnabled=true",
                "IQv2EndpointToPartitionsIntegrationTest.shouldGet [3] STREAMS protocol No standby"),
            streams.regressions().stream().map(TestOutcome::name).toList());
        assertEquals(1, result(apache, sluice).rows().stream().filter(row -> row.suite().streamsProtocol().isPresent())
            .count());
    }

    @Test
    void aClassWhoseSetUpNeedsSeveralBrokersIsNotRunnableWithWhatItAskedFor() {
        final String message = OutcomeRecorder.describe(new ExceptionInInitializerError(new IllegalArgumentException(
            "[not runnable on the single-node local broker] brokers with different settings: {0={broker.rack=rack0}}")));
        final TestOutcome wholeClass = new TestOutcome(CLASS + "HighAvailabilityTaskAssignorIntegrationTest]",
            "HighAvailabilityTaskAssignorIntegrationTest" + TestOutcome.WHOLE_CLASS, TestOutcome.Status.FAILED,
            message);
        final TestOutcome test = failed("EosIntegrationTest", "shouldCommit",
            "org.apache.kafka.common.errors.InvalidReplicationFactorException: "
                + "[not runnable on the single-node local broker] topic t asks for 3 replicas");

        final SuiteResult result = result(List.of(wholeClass, test), List.of(wholeClass, test)).rows().get(0);

        assertEquals(new SuiteResult.Counts(0, 0, 0, 0, 2), result.counts(result.sluice()));
        assertEquals(List.of(), result.regressions());
        assertEquals(List.of(
                "HighAvailabilityTaskAssignorIntegrationTest (whole class): " + SuiteResult.NEEDS_MORE_BROKERS
                    + ": brokers with different settings: {0={broker.rack=rack0}}",
                SuiteResult.NEEDS_MORE_BROKERS),
            List.copyOf(result.notRunnableByReason().keySet()));
    }

    @Test
    void invocationsThatSpellTheirParametersAreMatchedByThemNotByTheirNumber() {
        final List<TestOutcome> apache = List.of(
            drawn("IQv2StoreIntegrationTest", 1, "cache=true, store=ROCKS_KV", TestOutcome.Status.PASSED),
            drawn("IQv2StoreIntegrationTest", 2, "cache=false, store=ROCKS_KV", TestOutcome.Status.PASSED),
            drawn("IQv2StoreIntegrationTest", 3, "cache=false, store=IN_MEMORY_KV", TestOutcome.Status.PASSED),
            drawn("EosIntegrationTest", 1, "groupProtocol=classic", TestOutcome.Status.PASSED));
        final List<TestOutcome> sluice = List.of(
            // The same parameters drawn in another order; IN_MEMORY_KV not drawn at all.
            drawn("IQv2StoreIntegrationTest", 1, "cache=false, store=ROCKS_KV", TestOutcome.Status.FAILED),
            drawn("IQv2StoreIntegrationTest", 2, "cache=true, store=ROCKS_KV", TestOutcome.Status.PASSED),
            new TestOutcome(CLASS + "EosIntegrationTest]", "EosIntegrationTest" + TestOutcome.WHOLE_CLASS,
                TestOutcome.Status.FAILED, "timed out after 900 s and was ended, 0 tests finished"));

        final SuiteResult result = result(apache, sluice).rows().get(0);

        assertEquals(List.of(
                "IQv2StoreIntegrationTest.verifyStore [1] cache=false, store=ROCKS_KV: FAILED",
                "EosIntegrationTest.verifyStore [1] groupProtocol=classic: did not run on Sluice"),
            result.regressions().stream().map(test -> test.name() + ": "
                + (test.message().isEmpty() ? test.status() : test.message())).toList(),
            "an invocation missing from a class that ended early is missing; one its run went through was not drawn");
    }

    /** Invocation {@code number} of a parameterized test of {@code testClass}, its parameters spelled out. */
    private static TestOutcome drawn(final String testClass, final int number, final String parameters,
                                     final TestOutcome.Status status) {
        return new TestOutcome(
            CLASS + testClass + "]/[test-template:verifyStore()]/[test-template-invocation:#" + number + "]",
            testClass + ".verifyStore [" + number + "] " + parameters, status, "");
    }

    private static SuiteResult result(final List<TestOutcome> apache, final List<TestOutcome> sluice) {
        return new SuiteResult(Suite.integration(IntegrationParts.ALL), List.of(), Map.of(), Set.of(),
            new SuiteResult.Run(apache, 1, Map.of()), new SuiteResult.Run(sluice, 1, Map.of()));
    }

    private static TestOutcome passed(final String testClass, final String invocation) {
        return outcome(testClass, invocation, TestOutcome.Status.PASSED, "");
    }

    private static TestOutcome failed(final String testClass, final String invocation, final String message) {
        return outcome(testClass, invocation, TestOutcome.Status.FAILED, message);
    }

    private static TestOutcome outcome(final String testClass, final String invocation,
                                       final TestOutcome.Status status, final String message) {
        return new TestOutcome(CLASS + testClass + "]/[method:" + invocation + "]", testClass + "." + invocation,
            status, message);
    }
}
