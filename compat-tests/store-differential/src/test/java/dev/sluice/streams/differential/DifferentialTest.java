package dev.sluice.streams.differential;

import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every scenario, run through TopologyTestDriver on Kafka Streams' default stores and on Sluice's:
 * the same output records (key, value, timestamp, headers) and the same final store contents. A
 * case's name says whether its stores were Sluice's or still fell back to Kafka Streams'.
 */
class DifferentialTest {

    @TempDir
    Path stateDir;

    static Stream<Scenario> scenarios() {
        return Stream.concat(DslScenarios.all(), ProcessorApiScenarios.all());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scenarios")
    void sameOutputsAndStoreContentsOnKafkaStreamsAndSluiceStores(final Scenario scenario) {
        Differential.assertSameOnBothStacks(scenario, stateDir);
    }
}
