package dev.sluice.streams.state.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.RecordBatchingStateRestoreCallback;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state store contract every Sluice bytes store shares, over a native transactional store: init
 * opens it on its backend and registers the restore callback; commit makes the staged writes durable
 * together with the changelog offsets and the interactive-query position (KIP-892, KIP-1035);
 * {@link #rollback()} drops them; closing closes the iterators handed out and releases every native
 * object. Subclasses add the reads and writes of their store shape.
 *
 * <p>Where the runtime will not commit stores while their task runs (see {@link TransactionalStoresSetting}),
 * each write is committed as it is made, and the commit clears the stored changelog offsets: the data is
 * then ahead of any offset, and after a crash Kafka Streams finds none and rebuilds the task's state, as
 * it does for its own non-transactional stores. Closing a task still commits the offsets.
 *
 * @param <N> the native store
 */
public abstract class SluiceStateStore<N extends NativeTransactionalStore> implements StateStore, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SluiceStateStore.class);

    /** The framing of no offsets: a commit with it removes every stored offset. */
    private static final byte[] NO_OFFSETS = OffsetFraming.write(Map.of());

    private final String name;
    private final KeyValueBackend backend;
    private final int iteratorChunkBytes;
    private final StorePosition position = new StorePosition();
    private final OpenIterators iterators = new OpenIterators();
    private volatile N store;
    private StateStoreContext context;
    private boolean consistencyEnabled;
    private boolean transactional;

    SluiceStateStore(final String name, final KeyValueBackend backend, final int iteratorChunkBytes) {
        this.name = Objects.requireNonNull(name, "name cannot be null");
        this.backend = backend;
        this.iteratorChunkBytes = iteratorChunkBytes;
    }

    /** Opens this store's native shape over the key-value store holding its data (closing it on failure). */
    abstract N openOver(NativeKeyValueStore data);

    /**
     * The layout of the values Kafka Streams' layers above put in, which the store records and upgrades
     * its values to; empty for a store whose values have a layout of its own.
     */
    abstract Optional<ValueLayout> valueLayout();

    /** The scope of the store's metrics, as its supplier names it ({@code rocksdb}, {@code rocksdb-window} …). */
    String metricsScope() {
        return backend.metricsScope();
    }

    /** Applies a batch of changelog records to the native store. */
    abstract void restore(N store, List<ConsumerRecord<byte[], byte[]>> records);

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
        transactional = TransactionalStoresSetting.committedWhileRunning(appConfigs);
        consistencyEnabled = StreamsConfig.InternalConfig.getBoolean(appConfigs,
            StreamsConfig.InternalConfig.IQ_CONSISTENCY_OFFSET_VECTOR_ENABLED, false);
        this.context = context;
        final NativeKeyValueStore data = backend.open(name, context);
        final N opened = openOver(data);
        try {
            valueLayout().ifPresent(layout -> settleValueLayout(opened, layout));
            if (backend.persistent()) {
                RocksDbPropertyMetrics.register(context, metricsScope(), name, data);
            }
            position.loadCommitted(opened.committedPosition());
            context.register(root, (RecordBatchingStateRestoreCallback) this::restoreBatch);
        } catch (final RuntimeException e) {
            opened.close();
            throw e;
        }
        store = opened;
    }

    private void settleValueLayout(final N opened, final ValueLayout layout) {
        final int upgradedFrom = opened.settleValueLayout(layout.code());
        if (upgradedFrom != ValueLayout.NOT_UPGRADED) {
            LOG.info("State store {}: its values were upgraded from the {} layout to the {} layout", name,
                ValueLayout.ofCode(upgradedFrom), layout);
        }
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
    public void commit(final Map<TopicPartition, Long> changelogOffsets) {
        open().commit(OffsetFraming.write(changelogOffsets), position.toCommit());
        position.committed();
    }

    @Override
    public Long committedOffset(final TopicPartition partition) {
        final long offset = open().committedOffset(partition.topic(), partition.partition());
        return offset == NativeTransactionalStore.NO_OFFSET ? null : offset;
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
        final N current = store;
        return current == null ? 0 : current.approximateNumUncommittedBytes();
    }

    @Override
    public Position getPosition() {
        return position.at(IsolationLevel.READ_UNCOMMITTED);
    }

    @Override
    public <R> QueryResult<R> query(final Query<R> query, final PositionBound positionBound, final QueryConfig config) {
        return StoreQueryUtils.handleBasicQueries(query, positionBound, config, this, position.at(isolation(config)),
            context);
    }

    /**
     * Answers a query Kafka Streams' {@link StoreQueryUtils} cannot run on this store, the way it runs the
     * ones it can: not before the store reached {@code positionBound}, with execution info when asked, at
     * the position of the isolation level read, and a failure, not an exception, when {@code answer} throws.
     */
    <R> QueryResult<R> answer(final Query<R> query, final PositionBound positionBound, final QueryConfig config,
                              final Supplier<R> answer) {
        final long start = config.isCollectExecutionInfo() ? System.nanoTime() : -1L;
        final Position at = position.at(isolation(config));
        final Integer partition = context == null ? null : context.taskId().partition();
        QueryResult<R> result;
        if (partition != null && !StoreQueryUtils.isPermitted(at, positionBound, partition)) {
            result = QueryResult.notUpToBound(at, positionBound, partition);
        } else {
            try {
                result = QueryResult.forResult(answer.get());
            } catch (final RuntimeException e) {
                result = QueryResult.forFailure(FailureReason.STORE_EXCEPTION,
                    "The store (" + name + ") threw an exception while executing " + query + ": " + e);
            }
        }
        if (config.isCollectExecutionInfo()) {
            result.addExecutionInfo("Handled in " + getClass() + " in " + (System.nanoTime() - start) + "ns");
        }
        result.setPosition(at.copy());
        return result;
    }

    /** The isolation level a query reads at: Kafka Streams' default is READ_UNCOMMITTED. */
    static IsolationLevel isolation(final QueryConfig config) {
        return config.getIsolationLevel() == null ? IsolationLevel.READ_UNCOMMITTED : config.getIsolationLevel();
    }

    @Override
    public void close() {
        final N current;
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

    /** An iterator over a native scan, closed with the store if the caller does not close it first. */
    NativeKeyValueIterator iterate(final long scan) {
        return iterators.track(name, scan, iteratorChunkBytes);
    }

    /**
     * Records a write of the record being processed in the interactive-query position, and commits it
     * right away when the store runs non-transactionally.
     */
    void recordWrite() {
        if (transactional) {
            position.recordWrite(context);
        } else {
            open().commit(NO_OFFSETS, null);
            position.recordCommittedWrite(context);
        }
    }

    /** The native store; {@link InvalidStateStoreException} once closed. */
    N open() {
        final N current = store;
        if (current == null) {
            throw new InvalidStateStoreException("Store " + name + " is currently closed.");
        }
        return current;
    }

    private void restoreBatch(final Collection<ConsumerRecord<byte[], byte[]>> records) {
        final List<ConsumerRecord<byte[], byte[]>> batch = new ArrayList<>(records);
        for (final ConsumerRecord<byte[], byte[]> record : batch) {
            position.recordRestored(record, consistencyEnabled);
        }
        if (!batch.isEmpty()) {
            restore(open(), batch);
            if (!transactional) {
                commit(Map.of());
            }
        }
    }
}
