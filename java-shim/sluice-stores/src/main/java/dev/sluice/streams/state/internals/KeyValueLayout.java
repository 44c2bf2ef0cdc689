package dev.sluice.streams.state.internals;

/**
 * The value layout a bytes store declares to Kafka Streams' builders. Window stores use the same layouts;
 * {@link #create} builds only the key-value store of each.
 */
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
