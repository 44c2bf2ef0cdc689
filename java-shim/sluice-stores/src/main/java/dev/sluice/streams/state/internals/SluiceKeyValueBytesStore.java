package dev.sluice.streams.state.internals;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A transactional key-value bytes store on Sluice's native stores, the bottom layer under Kafka
 * Streams' metered, caching and change-logging wrappers.
 *
 * <p>Writes are staged until {@link #commit(Map)}, which makes them durable together with the
 * changelog offsets and the interactive-query position in one atomic write (KIP-892 and KIP-1035);
 * {@link #rollback()} drops them. The stream thread's own reads see its staged writes
 * (READ_UNCOMMITTED); {@link #readOnly(IsolationLevel)} and IQv2 queries read at either level from any
 * thread. Closing the store closes the iterators it handed out and releases every native object.
 */
public class SluiceKeyValueBytesStore implements KeyValueStore<Bytes, byte[]>, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SluiceKeyValueBytesStore.class);

    private final String name;
    private final KeyValueBackend backend;
    private final int iteratorChunkBytes;
    private final StorePosition position = new StorePosition();
    private final OpenIterators iterators = new OpenIterators();
    private volatile NativeKeyValueStore store;
    private StateStoreContext context;
    private boolean consistencyEnabled;

    SluiceKeyValueBytesStore(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.backend = backend;
        this.iteratorChunkBytes = iteratorChunkBytes;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(final StateStoreContext context, final StateStore root) {
        if (store != null) {
            throw new IllegalStateException("Store " + name + " is already initialised");
        }
        final Map<String, Object> appConfigs = context.appConfigs();
        TransactionalStoresSetting.warnIfDisabled(appConfigs);
        consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(appConfigs,
            StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
        this.context = context;
        final NativeKeyValueStore opened = backend.open(name, context);
        try {
            position.loadCommitted(opened.committedPosition());
            context.register(root, (RecordBatchingStateRestoreCallback) this::restoreBatch);
        } catch (final RuntimeException e) {
            opened.close();
            throw e;
        }
        store = opened;
    }

    @Override
    public boolean persistent() {
        return backend.persistent();
    }

    @Override
    public boolean isOpen() {
        return store != null;
    }

    @Override
    public boolean managesOffsets() {
        return true;
    }

    @Override
    public byte[] get(final Bytes key) {
        return get(key, false);
    }

    @Override
    public void put(final Bytes key, final byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        open().put(key.get(), value);
        position.recordWrite(context);
    }

    @Override
    public byte[] putIfAbsent(final Bytes key, final byte[] value) {
        Objects.requireNonNull(key, "key cannot be null");
        final byte[] previous = open().putIfAbsent(key.get(), value);
        if (previous == null) {
            position.recordWrite(context);
        }
        return previous;
    }

    @Override
    public void putAll(final List<KeyValue<Bytes, byte[]>> entries) {
        if (entries.isEmpty()) {
            return;
        }
        open().putAll(EntryFraming.entries(entries));
        position.recordWrite(context);
    }

    @Override
    public byte[] delete(final Bytes key) {
        Objects.requireNonNull(key, "key cannot be null");
        final byte[] previous = open().delete(key.get());
        position.recordWrite(context);
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

    @Override
    public void commit(final Map<TopicPartition, Long> changelogOffsets) {
        open().commit(EntryFraming.offsets(changelogOffsets), position.toCommit());
        position.committed();
    }

    @Override
    public Long committedOffset(final TopicPartition partition) {
        final long offset = open().committedOffset(partition.topic(), partition.partition());
        return offset == NativeKeyValueStore.NO_OFFSET ? null : offset;
    }

    /**
     * Drops the writes staged since the last commit (a transaction abort). Kafka Streams 4.4's
     * {@code StateStore} has no such method: its runtime closes a store to discard them.
     */
    public void rollback() {
        open().rollback();
        position.rolledBack();
    }

    @Override
    public long approximateNumUncommittedBytes() {
        final NativeKeyValueStore current = store;
        return current == null ? 0 : current.approximateNumUncommittedBytes();
    }

    @Override
    public Position getPosition() {
        return position.at(IsolationLevel.READ_UNCOMMITTED);
    }

    @Override
    public <R> QueryResult<R> query(final Query<R> query, final PositionBound positionBound, final QueryConfig config) {
        final IsolationLevel isolation = config.getIsolationLevel() == null
            ? IsolationLevel.READ_UNCOMMITTED
            : config.getIsolationLevel();
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position.at(isolation), context);
    }

    @Override
    public void close() {
        final NativeKeyValueStore current;
        synchronized (this) {
            current = store;
            store = null;
        }
        if (current != null) {
            iterators.closeAll();
            current.close();
        }
    }

    /** Iterators handed out and not yet closed. */
    int openIterators() {
        return iterators.size();
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
                + "(the built-in numeric serdes do not, for negative numbers).", name);
        }
        final NativeKeyValueStore current = open();
        final long scan = current.range(from == null ? null : from.get(), to == null ? null : to.get(), reverse, readCommitted);
        return iterators.track(name, scan, iteratorChunkBytes);
    }

    <PS extends Serializer<P>, P> KeyValueIterator<Bytes, byte[]> prefixScan(final P prefix, final PS prefixKeySerializer,
                                                                             final boolean readCommitted) {
        Objects.requireNonNull(prefix, "prefix cannot be null");
        Objects.requireNonNull(prefixKeySerializer, "prefixKeySerializer cannot be null");
        final NativeKeyValueStore current = open();
        final long scan = current.prefixScan(prefixKeySerializer.serialize(null, prefix), readCommitted);
        return iterators.track(name, scan, iteratorChunkBytes);
    }

    long approximateNumEntries(final boolean readCommitted) {
        return open().approximateNumEntries(readCommitted);
    }

    private void restoreBatch(final Collection<ConsumerRecord<byte[], byte[]>> records) {
        final List<KeyValue<Bytes, byte[]>> entries = new ArrayList<>(records.size());
        for (final ConsumerRecord<byte[], byte[]> record : records) {
            entries.add(KeyValue.pair(Bytes.wrap(record.key()), record.value()));
            position.recordRestored(record, consistencyEnabled);
        }
        if (!entries.isEmpty()) {
            open().putAll(EntryFraming.entries(entries));
        }
    }

    private NativeKeyValueStore open() {
        final NativeKeyValueStore current = store;
        if (current == null) {
            throw new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
        return current;
    }
}
