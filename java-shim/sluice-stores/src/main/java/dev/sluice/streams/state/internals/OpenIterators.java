package dev.sluice.streams.state.internals;

import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** The iterators a store handed out and that are still open, so closing the store closes them. */
final class OpenIterators {

    private final Set<NativeKeyValueIterator> open = ConcurrentHashMap.newKeySet();

    /** Wraps a native scan handle in an iterator tracked here until it is closed. */
    NativeKeyValueIterator track(final String storeName, final long scanHandle, final int chunkBytes) {
        final NativeKeyValueIterator iterator = new NativeKeyValueIterator(storeName, scanHandle, chunkBytes, open::remove);
        open.add(iterator);
        return iterator;
    }

    int size() {
        return open.size();
    }

    void closeAll() {
        for (final NativeKeyValueIterator iterator : new ArrayList<>(open)) {
            iterator.close();
        }
    }
}
