package dev.sluice.streams.state.internals;

import java.util.Optional;
import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * A bytes store whose values carry Kafka Streams' timestamp prefix. The store treats values as
 * opaque bytes; the {@link TimestampedBytesStore} marker tells Kafka Streams' builders that values
 * are already in the timestamped layout, so they add no converting adapter.
 */
public class SluiceTimestampedKeyValueBytesStore extends SluiceKeyValueBytesStore implements TimestampedBytesStore {

    SluiceTimestampedKeyValueBytesStore(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        super(name, backend, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.TIMESTAMPED);
    }
}
