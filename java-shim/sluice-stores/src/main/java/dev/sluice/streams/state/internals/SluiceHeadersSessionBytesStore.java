package dev.sluice.streams.state.internals;

import java.util.Optional;
import org.apache.kafka.streams.state.HeadersBytesStore;

/**
 * A session bytes store whose aggregates carry Kafka Streams' headers layout (KIP-1271). The
 * {@link HeadersBytesStore} marker tells Kafka Streams' headers-aware session builder that aggregates
 * are already in that layout, so it adds no converting adapter.
 */
public class SluiceHeadersSessionBytesStore extends SluiceSessionBytesStore implements HeadersBytesStore {

    SluiceHeadersSessionBytesStore(final String name, final KeyValueBackend backend, final long retentionPeriod,
                                   final long segmentInterval, final boolean timeOrdered,
                                   final int iteratorChunkBytes) {
        super(name, backend, retentionPeriod, segmentInterval, timeOrdered, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.WITH_HEADERS);
    }
}
