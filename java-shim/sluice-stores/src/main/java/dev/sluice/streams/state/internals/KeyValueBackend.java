package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.processor.StateStoreContext;

/** Where a key-value bytes store keeps its data: RocksDB on disk, or memory. */
interface KeyValueBackend {

    /** RocksDB: in {@code <state dir>/rocksdb/<name>}, memory shared per engine instance. */
    KeyValueBackend ROCKS_DB = new RocksDbBackend();

    /** In memory: restored from the changelog in full after every restart. */
    KeyValueBackend IN_MEMORY = new KeyValueBackend() {
        @Override
        public boolean persistent() {
            return false;
        }

        @Override
        public NativeKeyValueStore open(final String name, final StateStoreContext context) {
            return NativeKeyValueStore.inMemory(name);
        }

        @Override
        public String metricsScope() {
            return "in-memory";
        }
    };

    boolean persistent();

    /** Opens the store {@code name} for the task of {@code context}. */
    NativeKeyValueStore open(String name, StateStoreContext context);

    /** Metrics scope of stores on this backend: Kafka Streams' own, so existing dashboards keep working. */
    String metricsScope();
}
