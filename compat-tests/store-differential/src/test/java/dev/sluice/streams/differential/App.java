package dev.sluice.streams.differential;

import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyConfig;

/** A Kafka Streams application under test: builds its topology for a config and a store stack. */
@FunctionalInterface
interface App {

    Topology build(StreamsConfig config, StoreStack stores);

    /** A DSL application; the builder applies {@code dsl.store.suppliers.class} from the config. */
    static App dsl(final DslApp app) {
        return (config, stores) -> {
            final StreamsBuilder builder = new StreamsBuilder(new TopologyConfig(config));
            app.define(builder);
            return builder.build();
        };
    }

    @FunctionalInterface
    interface DslApp {
        void define(StreamsBuilder builder);
    }
}
