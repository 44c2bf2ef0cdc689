package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.state.HeadersBytesStoreSupplier;

/**
 * Supplies headers-aware stores. The {@link HeadersBytesStoreSupplier} marker is how Kafka Streams'
 * DSL materializers decide to build a headers-aware store on top of the supplier.
 */
final class SluiceHeadersKeyValueBytesStoreSupplier extends SluiceKeyValueBytesStoreSupplier
    implements HeadersBytesStoreSupplier {

    SluiceHeadersKeyValueBytesStoreSupplier(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        super(name, backend, KeyValueLayout.HEADERS, iteratorChunkBytes);
    }
}
