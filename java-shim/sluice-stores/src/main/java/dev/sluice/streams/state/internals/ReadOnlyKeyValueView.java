package dev.sluice.streams.state.internals;

import java.util.Objects;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * A bytes store seen at one isolation level, for interactive queries and other threads: at
 * READ_COMMITTED it shows the state of the last commit, at READ_UNCOMMITTED also the writes staged
 * since. It holds no state of its own, so it follows the store through commits and closes.
 */
final class ReadOnlyKeyValueView implements ReadOnlyKeyValueStore<Bytes, byte[]> {

    private final SluiceKeyValueBytesStore store;
    private final boolean readCommitted;

    ReadOnlyKeyValueView(final SluiceKeyValueBytesStore store, final IsolationLevel isolationLevel) {
        this.store = store;
        this.readCommitted = isolationLevel == IsolationLevel.READ_COMMITTED;
    }

    @Override
    public byte[] get(final Bytes key) {
        return store.get(key, readCommitted);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(final Bytes from, final Bytes to) {
        return store.range(from, to, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(final Bytes from, final Bytes to) {
        return store.range(from, to, true, readCommitted);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return store.range(null, null, false, readCommitted);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return store.range(null, null, true, readCommitted);
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(final P prefix,
                                                                                    final PS prefixKeySerializer) {
        return store.prefixScan(prefix, prefixKeySerializer, readCommitted);
    }

    @Override
    public long approximateNumEntries() {
        return store.approximateNumEntries(readCommitted);
    }

    @Override
    public ReadOnlyKeyValueStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return store.readOnly(isolationLevel);
    }
}
