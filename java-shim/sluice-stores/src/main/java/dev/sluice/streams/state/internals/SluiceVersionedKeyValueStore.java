package dev.sluice.streams.state.internals;

import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.query.MultiVersionedKeyQuery;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.Query;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.ResultOrder;
import org.apache.kafka.streams.state.VersionedKeyValueStore;
import org.apache.kafka.streams.state.VersionedRecord;
import org.apache.kafka.streams.state.VersionedRecordIterator;

/**
 * A transactional versioned key-value store of bytes on Sluice's native versioned store, with Kafka
 * Streams' semantics for history retention and grace period. Kafka Streams' own
 * {@code VersionedKeyValueToBytesStoreAdapter} turns it into the {@code VersionedBytesStore} its
 * builder wraps, so the bytes at that boundary are Kafka Streams' own. The state store contract is
 * {@link SluiceStateStore}'s; changelog records restore with their timestamp as version timestamp.
 *
 * <p>IQv2's {@link MultiVersionedKeyQuery} is answered here: Kafka Streams' shared query code runs it only
 * on its own RocksDB versioned store (it casts to that class), so this store runs it itself, as that store
 * does (from and to time as Kafka Streams' metered layer fills them in, ascending order or else
 * descending).
 */
public class SluiceVersionedKeyValueStore extends SluiceStateStore<NativeVersionedStore>
    implements VersionedKeyValueStore<Bytes, byte[]> {

    private final long historyRetention;

    SluiceVersionedKeyValueStore(final String name, final KeyValueBackend backend, final long historyRetention) {
        super(name, backend, NativeKeyValueIterator.DEFAULT_CHUNK_BYTES);
        this.historyRetention = historyRetention;
    }

    @Override
    Optional<ValueLayout> valueLayout() {
        return Optional.empty();
    }

    @Override
    NativeVersionedStore openOver(final NativeKeyValueStore data) {
        return NativeVersionedStore.open(data, historyRetention);
    }

    @Override
    void restore(final NativeVersionedStore store, final List<ConsumerRecord<byte[], byte[]>> records) {
        store.restore(EntryFraming.timestampedRecords(records));
    }

    @Override
    public long put(final Bytes key, final byte[] value, final long timestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        final long validTo = open().put(key.get(), value, timestamp);
        recordWrite();
        return validTo;
    }

    @Override
    public VersionedRecord<byte[]> delete(final Bytes key, final long timestamp) {
        Objects.requireNonNull(key, "key cannot be null");
        final VersionedRecord<byte[]> previous = EntryFraming.versionedRecord(open().delete(key.get(), timestamp));
        recordWrite();
        return previous;
    }

    @Override
    public VersionedRecord<byte[]> get(final Bytes key) {
        return get(key, false);
    }

    @Override
    public VersionedRecord<byte[]> get(final Bytes key, final long asOfTimestamp) {
        return get(key, asOfTimestamp, false);
    }

    @Override
    public VersionedKeyValueStore<Bytes, byte[]> readOnly(final IsolationLevel isolationLevel) {
        Objects.requireNonNull(isolationLevel, "isolationLevel cannot be null");
        return new ReadOnlyVersionedView(this, isolationLevel == IsolationLevel.READ_COMMITTED);
    }

    @Override
    public <R> QueryResult<R> query(final Query<R> query, final PositionBound positionBound, final QueryConfig config) {
        if (!(query instanceof MultiVersionedKeyQuery)) {
            return super.query(query, positionBound, config);
        }
        // Below Kafka Streams' metered layer a multi-version query is on bytes, answered with bytes.
        @SuppressWarnings("unchecked")
        final MultiVersionedKeyQuery<Bytes, byte[]> versions = (MultiVersionedKeyQuery<Bytes, byte[]>) query;
        final boolean readCommitted = isolation(config) == IsolationLevel.READ_COMMITTED;
        @SuppressWarnings("unchecked")
        final QueryResult<R> result = (QueryResult<R>) answer(versions, positionBound, config,
            () -> versions(versions.key(), versions.fromTime().get().toEpochMilli(),
                versions.toTime().get().toEpochMilli(), versions.resultOrder(), readCommitted));
        return result;
    }

    private VersionedRecordIterator<byte[]> versions(final Bytes key, final long fromTime, final long toTime,
                                                     final ResultOrder order, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        final byte[] framed = open().getVersions(key.get(), fromTime, toTime, order != ResultOrder.ASCENDING,
            readCommitted);
        final Iterator<VersionedRecord<byte[]>> records = EntryFraming.versionedRecords(framed).iterator();
        return new VersionedRecordIterator<>() {
            @Override
            public boolean hasNext() {
                return records.hasNext();
            }

            @Override
            public VersionedRecord<byte[]> next() {
                return records.next();
            }

            @Override
            public void close() {
            }
        };
    }

    VersionedRecord<byte[]> get(final Bytes key, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return EntryFraming.versionedRecord(open().get(key.get(), readCommitted));
    }

    VersionedRecord<byte[]> get(final Bytes key, final long asOfTimestamp, final boolean readCommitted) {
        Objects.requireNonNull(key, "key cannot be null");
        return EntryFraming.versionedRecord(open().getAsOf(key.get(), asOfTimestamp, readCommitted));
    }
}
