package dev.sluice.streams.state.internals;

import java.util.Optional;
import org.apache.kafka.streams.state.HeadersBytesStore;

/**
 * A bytes store whose values carry Kafka Streams' headers-and-timestamp layout (KIP-1271). The
 * {@link HeadersBytesStore} marker tells Kafka Streams' headers-aware builders that values are
 * already in that layout, so they add no converting adapter.
 */
public class SluiceHeadersKeyValueBytesStore extends SluiceKeyValueBytesStore implements HeadersBytesStore {

    SluiceHeadersKeyValueBytesStore(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        super(name, backend, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.TIMESTAMPED_WITH_HEADERS);
    }
}
