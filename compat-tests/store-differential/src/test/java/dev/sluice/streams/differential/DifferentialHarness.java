package dev.sluice.streams.differential;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.test.TestRecord;

/**
 * Runs a scenario through Kafka Streams' {@link TopologyTestDriver} on one store stack and collects
 * what the differential compares. Every input record carries a header with its position in the
 * script, so header propagation is compared too; the driver's wall clock starts at the epoch so that
 * wall-clock punctuations are reproducible.
 */
final class DifferentialHarness {

    static final String SEQUENCE_HEADER = "script-seq";

    private DifferentialHarness() {
    }

    static RunResult run(final Scenario scenario, final StoreStack stack, final Path stateDir) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, "differential");
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "unused:9092");
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.putAll(scenario.config());
        stack.configure(props);
        try (TopologyTestDriver driver = new TopologyTestDriver(scenario.app().build(new StreamsConfig(props), stack), props,
                Instant.EPOCH)) {
            final Map<String, TestOutputTopic<byte[], byte[]>> outputs = new HashMap<>();
            for (final String topic : scenario.outputTopics()) {
                outputs.put(topic, driver.createOutputTopic(topic, new ByteArrayDeserializer(), new ByteArrayDeserializer()));
            }
            final List<OutputRecord> written = new ArrayList<>();
            play(driver, scenario.input(), outputs, written);
            return new RunResult(written, storeContents(driver, scenario.input()), storeReports(driver));
        }
    }

    /** Feeds the script, draining the output topics after every step so that the interleaving is kept. */
    private static void play(final TopologyTestDriver driver, final InputScript script,
                             final Map<String, TestOutputTopic<byte[], byte[]>> outputs, final List<OutputRecord> written) {
        final Map<String, TestInputTopic<String, String>> inputs = new HashMap<>();
        int sequence = 0;
        for (final InputScript.Step step : script.steps()) {
            if (step instanceof InputScript.Pipe pipe) {
                final Headers headers = sequenceHeader(sequence++);
                inputs.computeIfAbsent(pipe.topic(), topic -> driver.createInputTopic(topic, new StringSerializer(), new StringSerializer()))
                    .pipeInput(new TestRecord<>(pipe.key(), pipe.value(), headers, pipe.timestamp()));
            } else if (step instanceof InputScript.AdvanceWallClock advance) {
                driver.advanceWallClockTime(advance.by());
            }
            outputs.forEach((topic, output) -> {
                for (final TestRecord<byte[], byte[]> record : output.readRecordsToList()) {
                    written.add(OutputRecord.of(topic, record.key(), record.value(), record.timestamp(), record.headers()));
                }
            });
        }
    }

    /** The header every input record carries: its position among the script's records. */
    static Headers sequenceHeader(final int sequence) {
        return new RecordHeaders().add(SEQUENCE_HEADER, Integer.toString(sequence).getBytes(StandardCharsets.US_ASCII));
    }

    private static Map<String, List<String>> storeContents(final TopologyTestDriver driver, final InputScript input) {
        final Map<String, List<String>> contents = new TreeMap<>();
        driver.getAllStateStores().forEach((name, store) -> contents.put(name, StoreDump.contents(driver, name, store, input)));
        return contents;
    }

    private static Map<String, RunResult.StoreReport> storeReports(final TopologyTestDriver driver) {
        final Map<String, RunResult.StoreReport> reports = new TreeMap<>();
        driver.getAllStateStores().forEach((name, store) -> reports.put(name, report(store)));
        return reports;
    }

    private static RunResult.StoreReport report(final StateStore store) {
        final StateStore bytesStore = SluiceCoverage.innermost(store);
        return new RunResult.StoreReport(StoreKind.of(store), bytesStore.getClass().getName(), SluiceCoverage.isSluiceStore(store));
    }
}
