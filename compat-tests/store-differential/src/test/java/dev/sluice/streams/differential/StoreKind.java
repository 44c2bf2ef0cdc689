package dev.sluice.streams.differential;

import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.SessionStore;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.WindowStore;

/** The kinds of store a store supplier serves; suppression buffers come from no supplier. */
enum StoreKind {
    KEY_VALUE, WINDOW, SESSION, VERSIONED, SUPPRESSION_BUFFER;

    /** The kind of a store as an application sees it (its outermost, metered layer). */
    static StoreKind of(final StateStore store) {
        if (store instanceof VersionedKeyValueStore) {
            return VERSIONED;
        }
        if (store instanceof WindowStore) {
            return WINDOW;
        }
        if (store instanceof SessionStore) {
            return SESSION;
        }
        if (store instanceof KeyValueStore) {
            return KEY_VALUE;
        }
        return SUPPRESSION_BUFFER;
    }
}
