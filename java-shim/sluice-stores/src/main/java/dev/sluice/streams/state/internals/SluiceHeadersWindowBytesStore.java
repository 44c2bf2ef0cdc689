package dev.sluice.streams.state.internals;

import java.util.Optional;
import org.apache.kafka.streams.state.HeadersBytesStore;

/**
 * A window bytes store whose values carry Kafka Streams' headers-and-timestamp layout (KIP-1271). The
 * {@link HeadersBytesStore} marker tells Kafka Streams' headers-aware window builder that values are
 * already in that layout, so it adds no converting adapter.
 */
public class SluiceHeadersWindowBytesStore extends SluiceWindowBytesStore implements HeadersBytesStore {

    SluiceHeadersWindowBytesStore(final String name, final KeyValueBackend backend, final WindowStoreOptions options,
                                  final int iteratorChunkBytes) {
        super(name, backend, options, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.TIMESTAMPED_WITH_HEADERS);
    }
}
