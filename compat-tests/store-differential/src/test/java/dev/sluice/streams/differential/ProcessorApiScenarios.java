package dev.sluice.streams.differential;

import dev.sluice.streams.differential.InputScript.RandomRecordShape;
import java.util.List;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * A Processor API application whose punctuators scan a store built with {@code Stores.keyValueStoreBuilder}
 * over {@code Stores.persistentKeyValueStore} or {@code SluiceStores.persistentKeyValueStore}, with
 * and without Kafka Streams' caching layer above it.
 */
final class ProcessorApiScenarios {

    private ProcessorApiScenarios() {
    }

    static Stream<Scenario> all() {
        return Stream.of(punctuatedScans(false), punctuatedScans(true));
    }

    static Scenario punctuatedScans(final boolean caching) {
        return Scenario.of("processor API punctuated scans" + (caching ? " with caching" : ""), (config, stores) -> {
                final StoreBuilder<KeyValueStore<String, String>> store =
                    Stores.keyValueStoreBuilder(stores.persistentKeyValueStore(ScanningProcessor.STORE), Serdes.String(), Serdes.String());
                final Topology topology = new Topology();
                topology.addSource("events", new StringDeserializer(), new StringDeserializer(), "events");
                topology.addProcessor("scanner", ScanningProcessor::new, "events");
                topology.addStateStore(caching ? store.withCachingEnabled() : store.withCachingDisabled(), "scanner");
                topology.addSink("scans", "scans", new StringSerializer(), new StringSerializer(), "scanner");
                return topology;
            },
            new InputScript().random(DslScenarios.SEED, 400, new RandomRecordShape(List.of("events"), 25, 0.1,
                (topic, random) -> Integer.toString(random.nextInt(100)))),
            List.of("scans"), StoreKind.KEY_VALUE);
    }
}
