package dev.sluice.compat.eoscrash;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;

/** Whose stores the DSL's aggregations use. */
enum StoreSuppliers {

    SLUICE("Sluice's stores") {
        @Override
        void configure(final Properties props) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, SluiceDslStoreSuppliers.class);
        }
    },
    APACHE("Kafka Streams' stores") {
        @Override
        void configure(final Properties props) {
        }
    };

    private final String description;

    StoreSuppliers(final String description) {
        this.description = description;
    }

    abstract void configure(Properties props);

    String description() {
        return description;
    }
}
