package dev.sluice.streams.state.internals;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.internals.WithRetentionPeriod;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * A transactional window bytes store on Sluice's native segmented window store, the bottom layer under
 * Kafka Streams' metered, caching and change-logging window wrappers. Reads return what Kafka Streams'
 * RocksDB window store returns, in its order; windows expire with stream time after the retention
 * period. Time-ordered ({@link WindowStoreOptions.Layout}), it is Kafka Streams' time-ordered window
 * store instead, the store of emit-final windowed aggregations, which Kafka Streams' builders only
 * recognise through {@code SluiceTimeOrderedWindowStore}. The state store contract is
 * {@link SluiceStateStore}'s.
 */
public class SluiceWindowBytesStore extends SluiceStateStore<NativeWindowStore> implements WindowStore<Bytes, byte[]>,
    WithRetentionPeriod {

    private final WindowStoreOptions options;

    SluiceWindowBytesStore(final String name, final KeyValueBackend backend, final WindowStoreOptions options,
                           final int iteratorChunkBytes) {
        super(name, backend, iteratorChunkBytes);
        this.options = options;
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.of(ValueLayout.PLAIN);
    }

    @Override
    String metricsScope() {
        return super.metricsScope() + "-window";
    }

    @Override
    NativeWindowStore openOver(final NativeKeyValueStore data) {
        return NativeWindowStore.open(data, options);
    }

    @Override
    void restore(final NativeWindowStore store, final List<ConsumerRecord<byte[], byte[]>> records) {
        store.restore(EntryFraming.records(records));
    }

    @Override
    public void put(final Bytes key, final byte[] value, final long windowStartTimestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        open().put(key.get(), value, windowStartTimestamp);
        recordWrite();
    }

    @Override
    public byte[] fetch(final Bytes key, final long time) {
        return fetch(key, time, false);
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(final Bytes key, final long timeFrom, final long timeTo) {
        return fetchKey(key, timeFrom, timeTo, false, false);
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(final Bytes key, final long timeFrom, final long timeTo) {
        return fetchKey(key, timeFrom, timeTo, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes keyFrom, final Bytes keyTo,
                                                           final long timeFrom, final long timeTo) {
        return fetchRange(keyFrom, keyTo, timeFrom, timeTo, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes keyFrom, final Bytes keyTo,
                                                                   final long timeFrom, final long timeTo) {
        return fetchRange(keyFrom, keyTo, timeFrom, timeTo, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(final long timeFrom, final long timeTo) {
        return fetchAll(timeFrom, timeTo, false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(final long timeFrom, final long timeTo) {
        return fetchAll(timeFrom, timeTo, true, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
        return all(false, false);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
        return all(true, false);
    }

    /** Read by Kafka Streams' state manager, as from its own window and session stores. */
    @Override
    public long retentionPeriod() {
        return options.retentionPeriod();
    }

    @Override
    public ReadOnlyWindowStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return new ReadOnlyWindowView(this, isolationLevel == IsolationLevel.READ_COMMITTED);
    }

    byte[] fetch(final Bytes key, final long time, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return open().fetch(key.get(), time, readCommitted);
    }

    WindowStoreIterator<byte[]> fetchKey(final Bytes key, final long timeFrom, final long timeTo,
                                         final boolean reverse, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        final long scan = open().fetchKey(key.get(), timeFrom, timeTo, reverse, readCommitted);
        return new NativeWindowStoreIterator(iterate(scan));
    }

    KeyValueIterator<Windowed<Bytes>, byte[]> fetchRange(final Bytes keyFrom, final Bytes keyTo, final long timeFrom,
                                                         final long timeTo, final boolean reverse,
                                                         final boolean readCommitted) {
        final long scan = open().fetchRange(keyFrom == null ? null : keyFrom.get(), keyTo == null ? null : keyTo.get(),
            timeFrom, timeTo, reverse, readCommitted);
        return windowed(scan);
    }

    KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(final long timeFrom, final long timeTo, final boolean reverse,
                                                       final boolean readCommitted) {
        return windowed(open().fetchAll(timeFrom, timeTo, reverse, readCommitted));
    }

    KeyValueIterator<Windowed<Bytes>, byte[]> all(final boolean reverse, final boolean readCommitted) {
        return windowed(open().all(reverse, readCommitted));
    }

    private KeyValueIterator<Windowed<Bytes>, byte[]> windowed(final long scan) {
        final long windowSize = options.windowSize();
        return new KeyMappingIterator<>(iterate(scan), key -> EntryFraming.windowedKey(key, windowSize));
    }
}
