package dev.sluice.streams.state.internals;

import java.nio.ByteBuffer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.streams.processor.StateStoreContext;
import org.apache.kafka.streams.processor.internals.ChangelogRecordDeserializationHelper;
import org.apache.kafka.streams.query.Position;
import org.apache.kafka.streams.state.internals.PositionSerde;
import org.apache.kafka.streams.state.internals.StoreQueryUtils;

/**
 * A store's interactive-query position in two parts, like its data: what was committed, and what
 * uncommitted readers see, the committed part advanced by the writes staged since. The committed part
 * is persisted with each commit in Kafka Streams' serialized form.
 *
 * <p>Both are kept up to date as writes come, so that reading a position (which the change-logging
 * layer does for every changelog record) returns a live object, as Kafka Streams' own stores do,
 * instead of merging copies.
 */
final class StorePosition {

    private Position committed = Position.emptyPosition();
    private Position uncommitted = Position.emptyPosition();

    /** Adopts a position read back from the store, or nothing when it has none. */
    synchronized void loadCommitted(final byte[] serialized) {
        committed = serialized == null ? Position.emptyPosition() : PositionSerde.deserialize(ByteBuffer.wrap(serialized));
        uncommitted = committed.copy();
    }

    /** Records the position of the record being processed, after a write. */
    synchronized void recordWrite(final StateStoreContext context) {
        StoreQueryUtils.updatePosition(uncommitted, context);
    }

    /** Records the position of the record being processed, after a write committed at once. */
    synchronized void recordCommittedWrite(final StateStoreContext context) {
        StoreQueryUtils.updatePosition(committed, context);
        StoreQueryUtils.updatePosition(uncommitted, context);
    }

    /** Records the position a restored changelog record carries. */
    synchronized void recordRestored(final ConsumerRecord<byte[], byte[]> record, final boolean consistencyEnabled) {
        ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(record, consistencyEnabled, uncommitted);
    }

    /** The position readers at {@code isolation} see; live, as Kafka Streams' stores hand out theirs. */
    synchronized Position at(final IsolationLevel isolation) {
        return isolation == IsolationLevel.READ_COMMITTED ? committed : uncommitted;
    }

    /** The serialized position a commit persists. */
    synchronized byte[] toCommit() {
        final ByteBuffer serialized = PositionSerde.serialize(uncommitted);
        final byte[] bytes = new byte[serialized.remaining()];
        serialized.get(bytes);
        return bytes;
    }

    /** The staged position became committed. */
    synchronized void committed() {
        committed = uncommitted.copy();
    }

    /** The staged writes, and their position, were dropped. */
    synchronized void rolledBack() {
        uncommitted = committed.copy();
    }
}
