package org.apache.kafka.streams.state.internals;

import dev.sluice.streams.state.internals.SluiceWindowBytesStore;
import java.util.Map;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.kstream.Windowed;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.HeadersBytesStore;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyWindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * Sluice's time-ordered window store (a time-ordered {@link SluiceWindowBytesStore}) as Kafka Streams'
 * {@link RocksDBTimeOrderedWindowStore}: the bytes store of emit-final windowed aggregations.
 *
 * <p>Why it is one, and why it lives in this package: Kafka Streams 4.4's window store builders
 * ({@code TimestampedWindowStoreBuilder} and {@code TimestampedWindowStoreWithHeadersBuilder}) pick the
 * caching layer by looking for an instance of {@code RocksDBTimeOrderedWindowStore} below the change-logging
 * layer. With one they use {@link TimeOrderedCachingWindowStore}, whose cache merges with the store in
 * window-start order (and which refuses any store but that class); without one, the key-ordered
 * {@link CachingWindowStore}, whose key-order merge over a time-ordered store returns windows twice. The
 * aggregation emits what {@code fetchAll} of that merge returns. The class's constructor is package-private.
 *
 * <p>Every method reaching the superclass' state is overridden here to go to Sluice's store instead (a test
 * checks that no method of the superclasses is left out). The RocksDB segmented store that the superclass'
 * constructor requires is created but never initialised: it opens nothing, holds nothing and is never
 * called; {@link #wrapped()} answers null, since no store lies below this one.
 */
public class SluiceTimeOrderedWindowStore extends RocksDBTimeOrderedWindowStore<KeyValueSegment>
    implements WithRetentionPeriod {

    private final SluiceWindowBytesStore store;
    private final boolean hasIndex;

    SluiceTimeOrderedWindowStore(final SluiceWindowBytesStore store, final long retentionPeriod,
                                 final long segmentInterval, final long windowSize, final boolean retainDuplicates,
                                 final boolean hasIndex) {
        super(new RocksDBTimeOrderedWindowSegmentedBytesStore<>(store.name(), retentionPeriod, hasIndex,
            new KeyValueSegments(store.name(), "rocksdb-window", retentionPeriod, segmentInterval)),
            retainDuplicates, windowSize);
        this.store = store;
        this.hasIndex = hasIndex;
    }

    /**
     * Presents {@code store}, a time-ordered Sluice window store, to Kafka Streams' builders; headers-aware
     * when {@code store} is, as Kafka Streams' own headers-aware time-ordered store is.
     */
    public static SluiceTimeOrderedWindowStore over(final SluiceWindowBytesStore store, final long retentionPeriod,
                                                    final long segmentInterval, final long windowSize,
                                                    final boolean retainDuplicates, final boolean hasIndex) {
        return store instanceof HeadersBytesStore
            ? new WithHeaders(store, retentionPeriod, segmentInterval, windowSize, retainDuplicates, hasIndex)
            : new SluiceTimeOrderedWindowStore(store, retentionPeriod, segmentInterval, windowSize, retainDuplicates,
                hasIndex);
    }

    /** The Sluice store this one presents. */
    public SluiceWindowBytesStore sluiceStore() {
        return store;
    }

    /** Drops the writes staged since the last commit, as {@link SluiceWindowBytesStore#rollback()}. */
    public void rollback() {
        store.rollback();
    }

    @Override
    public String name() {
        return store.name();
    }

    @Override
    public void init(final StateStoreContext context, final StateStore root) {
        store.init(context, root);
    }

    @Override
    public void commit(final Map<TopicPartition, Long> changelogOffsets) {
        store.commit(changelogOffsets);
    }

    @Override
    public boolean managesOffsets() {
        return store.managesOffsets();
    }

    @Override
    public Long committedOffset(final TopicPartition partition) {
        return store.committedOffset(partition);
    }

    @Override
    public long approximateNumUncommittedBytes() {
        return store.approximateNumUncommittedBytes();
    }

    @Override
    public void close() {
        store.close();
    }

    @Override
    public boolean persistent() {
        return store.persistent();
    }

    @Override
    public boolean isOpen() {
        return store.isOpen();
    }

    @Override
    void validateStoreOpen() {
        if (!store.isOpen()) {
            throw new org.apache.kafka.streams.errors.InvalidStateStoreException("Store " + name() + " is currently closed.");
        }
    }

    @Override
    public <R> QueryResult<R> query(final Query<R> query, final PositionBound positionBound, final QueryConfig config) {
        return store.query(query, positionBound, config);
    }

    @Override
    public Position getPosition() {
        return store.getPosition();
    }

    /** No cache lives in this layer: Kafka Streams' caching layer sits above it. */
    @Override
    public boolean setFlushListener(final CacheFlushListener<Object, Object> listener, final boolean sendOldValues) {
        return false;
    }

    @Override
    public void flushCache() {
    }

    @Override
    public void clearCache() {
    }

    @Override
    public <T extends StateStore> T findInner(final Class<T> type) {
        return type.isInstance(this) ? type.cast(this) : null;
    }

    @Override
    public AbstractRocksDBTimeOrderedSegmentedBytesStore<KeyValueSegment> wrapped() {
        return null;
    }

    @Override
    public boolean hasIndex() {
        return hasIndex;
    }

    @Override
    public long retentionPeriod() {
        return store.retentionPeriod();
    }

    @Override
    public void put(final Bytes key, final byte[] value, final long windowStartTimestamp) {
        store.put(key, value, windowStartTimestamp);
    }

    @Override
    public byte[] fetch(final Bytes key, final long timestamp) {
        return store.fetch(key, timestamp);
    }

    @Override
    public WindowStoreIterator<byte[]> fetch(final Bytes key, final long timeFrom, final long timeTo) {
        return store.fetch(key, timeFrom, timeTo);
    }

    @Override
    public WindowStoreIterator<byte[]> backwardFetch(final Bytes key, final long timeFrom, final long timeTo) {
        return store.backwardFetch(key, timeFrom, timeTo);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetch(final Bytes keyFrom, final Bytes keyTo, final long timeFrom,
                                                           final long timeTo) {
        return store.fetch(keyFrom, keyTo, timeFrom, timeTo);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetch(final Bytes keyFrom, final Bytes keyTo,
                                                                   final long timeFrom, final long timeTo) {
        return store.backwardFetch(keyFrom, keyTo, timeFrom, timeTo);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> all() {
        return store.all();
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardAll() {
        return store.backwardAll();
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> fetchAll(final long timeFrom, final long timeTo) {
        return store.fetchAll(timeFrom, timeTo);
    }

    @Override
    public KeyValueIterator<Windowed<Bytes>, byte[]> backwardFetchAll(final long timeFrom, final long timeTo) {
        return store.backwardFetchAll(timeFrom, timeTo);
    }

    @Override
    public ReadOnlyWindowStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        return store.readOnly(isolationLevel);
    }

    @Override
    public String toString() {
        return "SluiceTimeOrderedWindowStore{" + store.name() + ", hasIndex=" + hasIndex + "}";
    }

    /** The headers-aware variant, as Kafka Streams' {@code RocksDBTimeOrderedWindowStoreWithHeaders}. */
    static final class WithHeaders extends SluiceTimeOrderedWindowStore implements HeadersBytesStore {

        WithHeaders(final SluiceWindowBytesStore store, final long retentionPeriod, final long segmentInterval,
                    final long windowSize, final boolean retainDuplicates, final boolean hasIndex) {
            super(store, retentionPeriod, segmentInterval, windowSize, retainDuplicates, hasIndex);
        }
    }
}
