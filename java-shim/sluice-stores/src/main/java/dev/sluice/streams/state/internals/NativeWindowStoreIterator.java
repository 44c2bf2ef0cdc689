package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.state.WindowStoreIterator;

/** One key's windows as {@code (window start, value)}, read from a native scan. */
final class NativeWindowStoreIterator extends KeyMappingIterator<Long> implements WindowStoreIterator<byte[]> {

    NativeWindowStoreIterator(final NativeKeyValueIterator entries) {
        super(entries, EntryFraming::windowStart);
    }
}
