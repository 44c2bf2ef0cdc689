package dev.sluice.streams.runtime.internals;

import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's restoration reports, called on engine threads, handed to a Kafka Streams
 * {@link StateRestoreListener} (the one set with {@code KafkaStreams#setGlobalStateRestoreListener}).
 * The engine counts what it restored so far and what remains; Kafka Streams' listener wants each batch's
 * size and last offset, which this class derives. A listener that throws is logged and otherwise ignored:
 * progress reports must not stop a restore.
 */
public final class RestoreProgress {

    private static final Logger LOG = LoggerFactory.getLogger(RestoreProgress.class);

    private final StateRestoreListener listener;
    /** Per changelog partition: the end offset and the records reported so far. Engine threads own disjoint partitions. */
    private final ConcurrentHashMap<TopicPartition, long[]> partitions = new ConcurrentHashMap<>();

    public RestoreProgress(final StateRestoreListener listener) {
        this.listener = listener;
    }

    /** Restoring starts at {@code startOffset} towards {@code endOffset} (exclusive). */
    void restoreStarted(final String store, final String topic, final int partition, final long startOffset, final long endOffset) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        partitions.put(changelog, new long[] {endOffset, 0});
        guarded(() -> listener.onRestoreStart(changelog, store, startOffset, endOffset));
    }

    /** {@code restored} records so far, about {@code remaining} left. */
    void batchRestored(final String store, final String topic, final int partition, final long restored, final long remaining) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final long[] progress = partitions.computeIfAbsent(changelog, p -> new long[] {restored + remaining, 0});
        final long batch = restored - progress[1];
        progress[1] = restored;
        final long batchEndOffset = progress[0] - remaining - 1;
        guarded(() -> listener.onBatchRestored(changelog, store, batchEndOffset, batch));
    }

    /** The store reached the end of its changelog after {@code restored} records. */
    void restoreEnded(final String store, final String topic, final int partition, final long restored) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        partitions.remove(changelog);
        guarded(() -> listener.onRestoreEnd(changelog, store, restored));
    }

    /** Restoring stopped short of the end after {@code restored} records: the task was revoked or closed. */
    void restoreSuspended(final String store, final String topic, final int partition, final long restored) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        partitions.remove(changelog);
        guarded(() -> listener.onRestoreSuspended(changelog, store, restored));
    }

    private static void guarded(final Runnable report) {
        try {
            report.run();
        } catch (final RuntimeException e) {
            LOG.error("The state restore listener failed; restoration goes on", e);
        }
    }
}
