package dev.sluice.streams.state.internals;

import java.util.Optional;
import org.apache.kafka.streams.state.TimestampedBytesStore;

/**
 * A window bytes store whose values carry Kafka Streams' timestamp prefix. The
 * {@link TimestampedBytesStore} marker tells Kafka Streams' timestamped window builder that values are
 * already in that layout, so it adds no converting adapter.
 */
public class SluiceTimestampedWindowBytesStore extends SluiceWindowBytesStore implements TimestampedBytesStore {

    SluiceTimestampedWindowBytesStore(final String name, final KeyValueBackend backend,
                                      final WindowStoreOptions options, final int iteratorChunkBytes) {
        super(name, backend, options, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.TIMESTAMPED);
    }
}
