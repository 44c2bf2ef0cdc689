package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.state.HeadersBytesStoreSupplier;

/**
 * Supplies headers-aware session stores. The {@link HeadersBytesStoreSupplier} marker is how Kafka
 * Streams' DSL materializers decide to build a headers-aware session store on top of the supplier.
 */
final class SluiceHeadersSessionBytesStoreSupplier extends SluiceSessionBytesStoreSupplier
    implements HeadersBytesStoreSupplier {

    SluiceHeadersSessionBytesStoreSupplier(final String name, final KeyValueBackend backend,
                                           final long retentionPeriod, final long segmentInterval,
                                           final boolean timeOrdered) {
        super(name, backend, retentionPeriod, segmentInterval, timeOrdered, true);
    }
}
