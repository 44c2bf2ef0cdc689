package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.state.HeadersBytesStoreSupplier;

/**
 * Supplies headers-aware window stores. The {@link HeadersBytesStoreSupplier} marker is how Kafka
 * Streams' DSL materializers decide to build a headers-aware window store on top of the supplier.
 */
final class SluiceHeadersWindowBytesStoreSupplier extends SluiceWindowBytesStoreSupplier
    implements HeadersBytesStoreSupplier {

    SluiceHeadersWindowBytesStoreSupplier(final String name, final KeyValueBackend backend,
                                          final WindowStoreOptions options) {
        super(name, backend, KeyValueLayout.HEADERS, options);
    }
}
