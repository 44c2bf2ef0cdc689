package dev.sluice.streams.state.internals;

/** The value layout a key-value bytes store declares to Kafka Streams' builders. */
public enum KeyValueLayout {
    /** Plain values. */
    PLAIN {
        @Override
        SluiceKeyValueBytesStore create(final String name, final KeyValueBackend backend, final int chunkBytes) {
            return new SluiceKeyValueBytesStore(name, backend, chunkBytes);
        }
    },
    /** Values prefixed with their timestamp. */
    TIMESTAMPED {
        @Override
        SluiceKeyValueBytesStore create(final String name, final KeyValueBackend backend, final int chunkBytes) {
            return new SluiceTimestampedKeyValueBytesStore(name, backend, chunkBytes);
        }
    },
    /** Values with headers and timestamp. */
    HEADERS {
        @Override
        SluiceKeyValueBytesStore create(final String name, final KeyValueBackend backend, final int chunkBytes) {
            return new SluiceHeadersKeyValueBytesStore(name, backend, chunkBytes);
        }
    };

    abstract SluiceKeyValueBytesStore create(String name, KeyValueBackend backend, int chunkBytes);
}
