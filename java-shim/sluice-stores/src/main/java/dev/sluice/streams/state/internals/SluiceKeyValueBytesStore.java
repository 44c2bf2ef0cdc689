package dev.sluice.streams.state.internals;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transactional key-value bytes store on Sluice's native stores, the bottom layer under Kafka
 * Streams' metered, caching and change-logging wrappers. The state store contract (commit, rollback,
 * position, close) is {@link SluiceStateStore}'s.
 *
 * <p>The stream thread's own reads see its staged writes (READ_UNCOMMITTED);
 * {@link #readOnly(IsolationLevel)} and IQv2 queries read at either level from any thread.
 */
public class SluiceKeyValueBytesStore extends SluiceStateStore<NativeKeyValueStore>
    implements KeyValueStore<Bytes, byte[]> {

    private static final Logger LOG = LoggerFactory.getLogger(SluiceKeyValueBytesStore.class);

    SluiceKeyValueBytesStore(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        super(name, backend, iteratorChunkBytes);
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.PLAIN);
    }

    @Override
    NativeKeyValueStore openOver(final NativeKeyValueStore data) {
        return data;
    }

    @Override
    void restore(final NativeKeyValueStore store, final List<ConsumerRecord<byte[], byte[]>> records) {
        store.putAll(EntryFraming.records(records));
    }

    @Override
    public byte[] get(final Bytes key) {
        return get(key, false);
    }

    @Override
    public void put(final Bytes key, final byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        open().put(key.get(), value);
        recordWrite();
    }

    @Override
    public byte[] putIfAbsent(final Bytes key, final byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        final byte[] previous = open().putIfAbsent(key.get(), value);
        if (previous == null) {
            recordWrite();
        }
        return previous;
    }

    @Override
    public void putAll(final List<KeyValue<Bytes, byte[]>> entries) {
        if (entries.isEmpty()) {
            return;
        }
        open().putAll(EntryFraming.entries(entries));
        recordWrite();
    }

    @Override
    public byte[] delete(final Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        final byte[] previous = open().delete(key.get());
        recordWrite();
        return previous;
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> range(final Bytes from, final Bytes to) {
        return range(from, to, false, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseRange(final Bytes from, final Bytes to) {
        return range(from, to, true, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> all() {
        return range(null, null, false, false);
    }

    @Override
    public KeyValueIterator<Bytes, byte[]> reverseAll() {
        return range(null, null, true, false);
    }

    @Override
    public <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(final P prefix,
                                                                                    final PS prefixKeySerializer) {
        return prefixScan(prefix, prefixKeySerializer, false);
    }

    @Override
    public long approximateNumEntries() {
        return approximateNumEntries(false);
    }

    @Override
    public ReadOnlyKeyValueStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return new ReadOnlyKeyValueView(this, isolationLevel);
    }

    byte[] get(final Bytes key, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return open().get(key.get(), readCommitted);
    }

    KeyValueIterator<Bytes, byte[]> range(final Bytes from, final Bytes to, final boolean reverse,
                                          final boolean readCommitted) {
        if (from != null && to != null && from.compareTo(to) > 0) {
            LOG.warn("Returning an empty iterator for a range of store {} whose from key is greater than its to key. "
                + "The arguments may be in the wrong order, or the key serde may not preserve order in bytes "
                + "(the built-in numeric serdes do not, for negative numbers).", name());
        }
        final NativeKeyValueStore current = open();
        final long scan = current.range(from == null ? null : from.get(), to == null ? null : to.get(), reverse, readCommitted);
        return iterate(scan);
    }

    <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(final P prefix, final PS prefixKeySerializer,
                                                                             final boolean readCommitted) {
        Objects.requireNonNull(prefix, "prefix cannot be null");
        Objects.requireNonNull(prefixKeySerializer, "prefixKeySerializer cannot be null");
        final NativeKeyValueStore current = open();
        final long scan = current.prefixScan(prefixKeySerializer.serialize(null, prefix), readCommitted);
        return iterate(scan);
    }

    long approximateNumEntries(final boolean readCommitted) {
        return open().approximateNumEntries(readCommitted);
    }
}
