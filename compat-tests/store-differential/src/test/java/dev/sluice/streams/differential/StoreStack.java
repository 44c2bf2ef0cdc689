package dev.sluice.streams.differential;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import dev.sluice.streams.state.SluiceStores;
import java.time.Duration;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.KeyValueBytesStoreSupplier;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.VersionedBytesStoreSupplier;

/** The stores an application runs on in one half of a differential run. */
enum StoreStack {
    /** Kafka Streams' defaults: the reference. */
    KAFKA_STREAMS {
        @Override
        void configure(final Properties props) {
        }

        @Override
        KeyValueBytesStoreSupplier persistentKeyValueStore(final String name) {
            return Stores.persistentKeyValueStore(name);
        }

        @Override
        VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name, final Duration historyRetention) {
            return Stores.persistentVersionedKeyValueStore(name, historyRetention);
        }
    },
    /** Sluice's suppliers for the DSL and for the Processor API. */
    SLUICE {
        @Override
        void configure(final Properties props) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, SluiceDslStoreSuppliers.class);
        }

        @Override
        KeyValueBytesStoreSupplier persistentKeyValueStore(final String name) {
            return SluiceStores.persistentKeyValueStore(name);
        }

        @Override
        VersionedBytesStoreSupplier persistentVersionedKeyValueStore(final String name, final Duration historyRetention) {
            return SluiceCoverage.versionedStore(name, historyRetention)
                .orElseGet(() -> Stores.persistentVersionedKeyValueStore(name, historyRetention));
        }
    };

    /** Points the DSL's store suppliers at this stack. */
    abstract void configure(Properties props);

    abstract KeyValueBytesStoreSupplier persistentKeyValueStore(String name);

    abstract VersionedBytesStoreSupplier persistentVersionedKeyValueStore(String name, Duration historyRetention);
}
