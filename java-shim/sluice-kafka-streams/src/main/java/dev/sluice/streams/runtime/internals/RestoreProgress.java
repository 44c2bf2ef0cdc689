package dev.sluice.streams.runtime.internals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's restoration reports, called on engine threads: kept as each restoring changelog
 * partition's position, which {@code KafkaStreams#allLocalStorePartitionLags} reads, and handed to a Kafka
 * Streams {@link StateRestoreListener} (the one set with {@code KafkaStreams#setGlobalStateRestoreListener}),
 * if any. The engine counts what it restored so far and what remains; Kafka Streams' listener wants each
 * batch's size and last offset, which this class derives. A listener that throws is logged and otherwise
 * ignored: progress reports must not stop a restore.
 *
 * <p>A partition is restoring from its start report until its end (or suspension) report has been heard
 * by the listener, so that a listener asking for the lags from within a report finds its partition.
 */
public final class RestoreProgress {

    private static final Logger LOG = LoggerFactory.getLogger(RestoreProgress.class);

    /** Where a changelog partition's restoration stands. */
    private static final class Restoring {
        final String store;
        final long endOffset;
        volatile long position;
        long restored;

        Restoring(final String store, final long endOffset, final long position) {
            this.store = store;
            this.endOffset = endOffset;
            this.position = position;
        }
    }

    /** The restoring changelog partition of a store, and the offset its restoration reached. */
    public record Position(String store, TopicPartition changelog, long offset) { }

    private final StateRestoreListener listener;
    /** Per restoring changelog partition. Engine threads own disjoint partitions. */
    private final ConcurrentHashMap<TopicPartition, Restoring> partitions = new ConcurrentHashMap<>();

    /** @param listener hears every report; null for none */
    public RestoreProgress(final StateRestoreListener listener) {
        this.listener = listener;
    }

    /** The changelog partitions restoring now, each with the next offset to restore. */
    public List<Position> restoring() {
        final List<Position> positions = new ArrayList<>();
        partitions.forEach((changelog, restoring) ->
            positions.add(new Position(restoring.store, changelog, restoring.position)));
        return positions;
    }

    /** Restoring starts at {@code startOffset} towards {@code endOffset} (exclusive). */
    void restoreStarted(final String store, final String topic, final int partition, final long startOffset, final long endOffset) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        partitions.put(changelog, new Restoring(store, endOffset, startOffset));
        report(restoreListener -> restoreListener.onRestoreStart(changelog, store, startOffset, endOffset));
    }

    /** {@code restored} records so far, about {@code remaining} left. */
    void batchRestored(final String store, final String topic, final int partition, final long restored, final long remaining) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final Restoring progress = partitions.computeIfAbsent(changelog,
            p -> new Restoring(store, restored + remaining, 0));
        final long batch = restored - progress.restored;
        progress.restored = restored;
        progress.position = progress.endOffset - remaining;
        final long batchEndOffset = progress.endOffset - remaining - 1;
        report(restoreListener -> restoreListener.onBatchRestored(changelog, store, batchEndOffset, batch));
    }

    /** The store reached the end of its changelog after {@code restored} records. */
    void restoreEnded(final String store, final String topic, final int partition, final long restored) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final Restoring progress = partitions.get(changelog);
        if (progress != null) {
            progress.position = progress.endOffset;
        }
        report(restoreListener -> restoreListener.onRestoreEnd(changelog, store, restored));
        partitions.remove(changelog);
    }

    /** Restoring stopped short of the end after {@code restored} records: the task was revoked or closed. */
    void restoreSuspended(final String store, final String topic, final int partition, final long restored) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        report(restoreListener -> restoreListener.onRestoreSuspended(changelog, store, restored));
        partitions.remove(changelog);
    }

    private void report(final Consumer<StateRestoreListener> report) {
        if (listener == null) {
            return;
        }
        try {
            report.accept(listener);
        } catch (final RuntimeException e) {
            LOG.error("The state restore listener failed; restoration goes on", e);
        }
    }
}
