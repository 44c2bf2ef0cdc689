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
 * the writes staged since add. Committed readers see the first, uncommitted readers both merged.
 * The committed part is persisted with each commit in Kafka Streams' serialized form.
 */
final class StorePosition {

    private Position committed = Position.emptyPosition();
    private Position staged = Position.emptyPosition();

    /** Adopts a position read back from the store, or nothing when it has none. */
    synchronized void loadCommitted(final byte[] serialized) {
        committed = serialized == null ? Position.emptyPosition() : PositionSerde.deserialize(ByteBuffer.wrap(serialized));
        staged = Position.emptyPosition();
    }

    /** Records the position of the record being processed, after a write. */
    synchronized void recordWrite(final StateStoreContext context) {
        StoreQueryUtils.updatePosition(staged, context);
    }

    /** Records the position of the record being processed, after a write committed at once. */
    synchronized void recordCommittedWrite(final StateStoreContext context) {
        StoreQueryUtils.updatePosition(committed, context);
    }

    /** Records the position a restored changelog record carries. */
    synchronized void recordRestored(final ConsumerRecord<byte[], byte[]> record, final boolean consistencyEnabled) {
        ChangelogRecordDeserializationHelper.applyChecksAndUpdatePosition(record, consistencyEnabled, staged);
    }

    /** The position readers at {@code isolation} see. */
    synchronized Position at(final IsolationLevel isolation) {
        final Position visible = committed.copy();
        return isolation == IsolationLevel.READ_COMMITTED ? visible : visible.merge(staged);
    }

    /** The serialized position a commit persists. */
    synchronized byte[] toCommit() {
        final ByteBuffer serialized = PositionSerde.serialize(at(IsolationLevel.READ_UNCOMMITTED));
        final byte[] bytes = new byte[serialized.remaining()];
        serialized.get(bytes);
        return bytes;
    }

    /** The staged position became committed. */
    synchronized void committed() {
        committed = at(IsolationLevel.READ_UNCOMMITTED);
        staged = Position.emptyPosition();
    }

    /** The staged writes, and their position, were dropped. */
    synchronized void rolledBack() {
        staged = Position.emptyPosition();
    }
}
