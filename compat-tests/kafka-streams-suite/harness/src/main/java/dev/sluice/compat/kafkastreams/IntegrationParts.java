package dev.sluice.compat.kafkastreams;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The integration suite's test classes in named parts, by what they test. Every class runs on a broker
 * of its own, so the whole jar takes hours on two cores for both targets; {@code make compat
 * COMPAT_PARTS=a,b} runs some parts, and the report says which parts it holds. Each part is meant to
 * take at most about 40 minutes for both targets.
 *
 * <p>This is the one list of the jar's classes: a test class of the jar that no part names, or a
 * name that no longer is a class of the jar, stops the run, so that a new jar version cannot hide
 * classes from the report.
 */
final class IntegrationParts {

    /** The package of the integration tests; its top-level {@code *Test} classes are the suite's classes. */
    static final String PACKAGE = "org.apache.kafka.streams.integration.";
    /** The name that picks every part. */
    static final String ALL_PARTS = "all";

    /** A part: its name, what its classes test, and the classes, by simple name. */
    record Part(String name, String subject, List<String> classes) {
    }

    static final List<Part> ALL = List.of(
        new Part("eos-restore-iq", "exactly-once, restore and interactive queries: what Sluice's transactional "
            + "stores change", List.of(
                "EosIntegrationTest",
                "EOSUncleanShutdownIntegrationTest",
                "RestoreIntegrationTest",
                "KTableSourceTopicRestartIntegrationTest",
                "StoreQueryIntegrationTest",
                "IQv2IntegrationTest",
                "IQv2VersionedStoreIntegrationTest",
                "ConsistencyVectorIntegrationTest",
                "VersionedKeyValueStoreIntegrationTest")),
        new Part("joins", "stream-stream, stream-table and table-table joins", List.of(
            "AbstractJoinIntegrationTest",
            "JoinGracePeriodDurabilityIntegrationTest",
            "JoinStoreIntegrationTest",
            "JoinWithIncompleteMetadataIntegrationTest",
            "KStreamKStreamIntegrationTest",
            "OuterJoinListValueStoreRestorationTest",
            "RelaxedNullKeyRequirementJoinTest",
            "SelfJoinUpgradeIntegrationTest",
            "StreamStreamJoinIntegrationTest",
            "StreamTableJoinIntegrationTest",
            "StreamTableJoinTopologyOptimizationIntegrationTest",
            "StreamTableJoinWithGraceIntegrationTest",
            "TableTableJoinIntegrationTest")),
        new Part("foreign-key-joins", "table-table foreign-key joins", List.of(
            "KTableKTableForeignKeyInnerJoinCustomPartitionerIntegrationTest",
            "KTableKTableForeignKeyInnerJoinMultiIntegrationTest",
            "KTableKTableForeignKeyJoinDistributedTest",
            "KTableKTableForeignKeyJoinIntegrationTest",
            "KTableKTableForeignKeyJoinMaterializationIntegrationTest")),
        new Part("aggregations-windows", "aggregations, windows and suppression", List.of(
            "EmitOnChangeIntegrationTest",
            "KStreamAggregationDedupIntegrationTest",
            "KStreamAggregationIntegrationTest",
            "SlidingWindowedKStreamIntegrationTest",
            "TimeWindowedKStreamIntegrationTest",
            "SuppressionDurabilityIntegrationTest",
            "SuppressionIntegrationTest")),
        new Part("queries", "interactive queries over every kind of store, range queries and lag", List.of(
            "IQv2EndpointToPartitionsIntegrationTest",
            "IQv2StoreIntegrationTest",
            "QueryableStateIntegrationTest",
            "RangeQueryIntegrationTest",
            "KTableEfficientRangeQueryTest",
            "PositionRestartIntegrationTest",
            "OptimizedKTableIntegrationTest",
            "LagFetchIntegrationTest")),
        new Part("stores-global-tables", "store formats and their upgrades, global tables, the state directory",
            List.of(
                "HeadersStoreUpgradeIntegrationTest",
                "TimestampedStoreUpgradeIntegrationTest",
                "SessionsStoreWithHeadersTest",
                "TimestampedKeyValueStoreWithHeadersTest",
                "TimestampedWindowStoreWithHeadersTest",
                "GlobalKTableEOSIntegrationTest",
                "GlobalKTableIntegrationTest",
                "GlobalStateReprocessTest",
                "GlobalThreadShutDownOrderTest",
                "StateDirectoryIntegrationTest")),
        new Part("rebalance-assignment-standby", "rebalances, task assignment, standby tasks, upgrades", List.of(
            "HighAvailabilityTaskAssignorIntegrationTest",
            "RebalanceIntegrationTest",
            "RebalanceProtocolMigrationIntegrationTest",
            "RebalanceTaskClosureIntegrationTest",
            "StandbyTaskCreationIntegrationTest",
            "StandbyTaskEOSIntegrationTest",
            "StandbyTaskEOSMultiRebalanceIntegrationTest",
            "TaskAssignorIntegrationTest",
            "SmokeTestDriverIntegrationTest",
            "StreamsUpgradeTestIntegrationTest")),
        new Part("lifecycle-threads", "stream threads, pause and resume, close, named topologies", List.of(
            "AdjustStreamThreadCountTest",
            "TaskMetadataIntegrationTest",
            "StateUpdaterFailureIntegrationTest",
            "PauseResumeIntegrationTest",
            "NamedTopologyIntegrationTest",
            "KafkaStreamsCloseOptionsIntegrationTest")),
        new Part("topics-and-metadata", "source, internal and repartition topics, offsets reset", List.of(
            "FineGrainedAutoResetIntegrationTest",
            "HandlingSourceTopicDeletionIntegrationTest",
            "InternalTopicIntegrationTest",
            "KStreamRepartitionIntegrationTest",
            "PurgeRepartitionTopicIntegrationTest",
            "RegexSourceIntegrationTest",
            "ResetPartitionTimeIntegrationTest",
            "SwallowUnknownTopicErrorIntegrationTest")),
        new Part("handlers-metrics-misc", "exception handlers, metrics and telemetry, the Processor API with the "
            + "DSL, word count", List.of(
                "AtLeastOnceDeliveryMessageLossIntegrationTest",
                "DeadLetterQueueIntegrationTest",
                "ProcessingExceptionHandlerIntegrationTest",
                "StreamsUncaughtExceptionHandlerIntegrationTest",
                "InMemoryStoreMetricsIntegrationTest",
                "MetricsIntegrationTest",
                "MetricsReporterIntegrationTest",
                "RocksDBMetricsIntegrationTest",
                "KafkaStreamsTelemetryIntegrationTest",
                "PapiDslIntegrationTest",
                "WordCountTest")));

    private IntegrationParts() {
    }

    /**
     * The parts a comma-separated list names, in the order of {@link #ALL}; {@value #ALL_PARTS} names
     * every part. A name that is no part is refused with the names there are.
     */
    static List<Part> named(final String names) {
        final Set<String> wanted = Arrays.stream(names.split(",")).map(String::strip)
            .filter(name -> !name.isEmpty()).collect(Collectors.toCollection(LinkedHashSet::new));
        if (wanted.isEmpty() || wanted.contains(ALL_PARTS)) {
            return ALL;
        }
        final Set<String> known = ALL.stream().map(Part::name).collect(Collectors.toCollection(LinkedHashSet::new));
        final List<String> unknown = wanted.stream().filter(name -> !known.contains(name)).toList();
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("No integration part is named " + String.join(", ", unknown)
                + "; the parts are " + String.join(", ", known) + " (or " + ALL_PARTS + ")");
        }
        return ALL.stream().filter(part -> wanted.contains(part.name())).toList();
    }

    /** The parts of {@link #ALL} that are not among {@code parts}. */
    static List<Part> others(final List<Part> parts) {
        return ALL.stream().filter(part -> !parts.contains(part)).toList();
    }

    /**
     * The fully qualified classes of the given parts, after checking that the parts name every test
     * class of the jar exactly once and name nothing else.
     */
    static List<String> classesOf(final List<Part> parts, final TestJar jar) {
        checkCovers(jar);
        return parts.stream().flatMap(part -> part.classes().stream()).map(name -> PACKAGE + name).toList();
    }

    /** Fails, naming them, when a test class of the jar is in no part or in several, or a part names no class of it. */
    static void checkCovers(final TestJar jar) {
        final Set<String> inJar = new TreeSet<>(testClasses(jar));
        final List<String> named = new ArrayList<>();
        ALL.forEach(part -> named.addAll(part.classes()));
        final Set<String> twice = new TreeSet<>(named.stream()
            .filter(name -> named.indexOf(name) != named.lastIndexOf(name)).toList());
        final Set<String> inNoPart = new TreeSet<>(inJar);
        named.forEach(inNoPart::remove);
        final Set<String> notInJar = new TreeSet<>(named);
        notInJar.removeAll(inJar);
        if (!twice.isEmpty() || !inNoPart.isEmpty() || !notInJar.isEmpty()) {
            throw new IllegalStateException("The integration parts (IntegrationParts) do not match "
                + jar.path().getFileName() + ": in no part " + inNoPart + ", in several parts " + twice
                + ", named but not a test class of the jar " + notInJar + ". Give every class one part.");
        }
    }

    /** The jar's test classes, by simple name: the top-level classes of the integration package named {@code *Test}. */
    static List<String> testClasses(final TestJar jar) {
        return jar.classes().stream()
            .filter(name -> name.startsWith(PACKAGE) && name.endsWith("Test")
                && name.indexOf('.', PACKAGE.length()) < 0)
            .map(name -> name.substring(PACKAGE.length()))
            .toList();
    }
}
