package dev.sluice.streams.state.internals;

import java.util.Objects;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;

/**
 * A versioned store seen at one isolation level, for interactive queries and other threads: reads only.
 * It holds no state of its own, so it follows the store through commits and closes; its owner, not the
 * view, initialises and closes the store.
 */
final class ReadOnlyVersionedView implements VersionedKeyValueStore<Bytes, byte[]> {

    private final SluiceVersionedKeyValueStore store;
    private final boolean readCommitted;

    ReadOnlyVersionedView(final SluiceVersionedKeyValueStore store, final boolean readCommitted) {
        this.store = store;
        this.readCommitted = readCommitted;
    }

    @Override
    public VersionedRecord<byte[]> get(final Bytes key) {
        return store.get(key, readCommitted);
    }

    @Override
    public VersionedRecord<byte[]> get(final Bytes key, final long asOfTimestamp) {
        return store.get(key, asOfTimestamp, readCommitted);
    }

    @Override
    public long put(final Bytes key, final byte[] value, final long timestamp) {
        throw new UnsupportedOperationException("A read-only view of store " + name() + " cannot be written");
    }

    @Override
    public VersionedRecord<byte[]> delete(final Bytes key, final long timestamp) {
        throw new UnsupportedOperationException("A read-only view of store " + name() + " cannot be written");
    }

    @Override
    public VersionedKeyValueStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return store.readOnly(isolationLevel);
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public void init(final StateStoreContext context, final StateStore root) {
        throw new UnsupportedOperationException("A read-only view of store " + name() + " is not initialised");
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("A read-only view of store " + name() + " is closed with its store");
    }

    @Override
    public boolean persistent() {
        return store.persistent();
    }

    @Override
    public boolean isOpen() {
        return store.isOpen();
    }
}
