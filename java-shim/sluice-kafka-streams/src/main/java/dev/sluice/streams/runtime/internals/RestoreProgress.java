package dev.sluice.streams.runtime.internals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's restoration reports, called on engine threads: kept as each restoring changelog
 * partition's position, which {@code KafkaStreams#allLocalStorePartitionLags} reads, and handed to a Kafka
 * Streams {@link StateRestoreListener} (the one set with {@code KafkaStreams#setGlobalStateRestoreListener}),
 * if any, and to the restoring task's metrics. How standby replicas follow their changelogs goes to the {@link StandbyUpdateListener} set with
 * {@code KafkaStreams#setStandbyUpdateListener}, if any. The engine counts what it restored so far and what remains; Kafka Streams' listener wants each
 * batch's size and last offset, which this class derives. A listener that throws is logged and otherwise
 * ignored: progress reports must not stop a restore (or a standby replica).
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

    /** Hears how the changelogs of tasks' stores are read, for what the tasks record and report. */
    interface TaskProgress {
        /**
         * An active task's restoration, as its Kafka Streams task records it ({@code Task#recordRestoration}): the
         * offsets left to restore when a changelog partition starts, then the records restored and the offsets
         * passed since the last report.
         */
        void restored(TopicPartition changelog, long records, long offsets, boolean starting);

        /** Where {@code changelog} ends as last known, while an active task restores or a standby replica follows it. */
        void changelogEnds(TopicPartition changelog, long endOffset);
    }

    private final StateRestoreListener listener;
    private final StandbyUpdateListener standbyListener;
    private final TaskProgress taskProgress;
    /** Per restoring changelog partition. Engine threads own disjoint partitions. */
    private final ConcurrentHashMap<TopicPartition, Restoring> partitions = new ConcurrentHashMap<>();
    /** Per changelog partition a standby replica follows: its store and the next offset to read. */
    private final ConcurrentHashMap<TopicPartition, Position> followed = new ConcurrentHashMap<>();

    /**
     * @param listener        hears every restore report; null for none
     * @param standbyListener hears every standby replica's report; null for none
     * @param taskProgress    hears how tasks' changelogs are read (global stores have no task)
     */
    RestoreProgress(final StateRestoreListener listener, final StandbyUpdateListener standbyListener,
                    final TaskProgress taskProgress) {
        this.listener = listener;
        this.standbyListener = standbyListener;
        this.taskProgress = taskProgress;
    }

    /** The changelog partitions restoring now, each with the next offset to restore. */
    public List<Position> restoring() {
        final List<Position> positions = new ArrayList<>();
        partitions.forEach((changelog, restoring) ->
            positions.add(new Position(restoring.store, changelog, restoring.position)));
        return positions;
    }

    /** The changelog partitions standby replicas follow, each with the next offset to read. */
    public List<Position> followed() {
        return new ArrayList<>(followed.values());
    }

    /** Restoring starts at {@code startOffset} towards {@code endOffset} (exclusive). */
    void restoreStarted(final String store, final String topic, final int partition, final long startOffset, final long endOffset) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        partitions.put(changelog, new Restoring(store, endOffset, startOffset));
        taskProgress.changelogEnds(changelog, endOffset);
        taskProgress.restored(changelog, 0, Math.max(0, endOffset - startOffset), true);
        report(restoreListener -> restoreListener.onRestoreStart(changelog, store, startOffset, endOffset));
    }

    /** {@code restored} records so far, about {@code remaining} left. */
    void batchRestored(final String store, final String topic, final int partition, final long restored, final long remaining) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final Restoring progress = partitions.computeIfAbsent(changelog,
            p -> new Restoring(store, restored + remaining, 0));
        final long batch = restored - progress.restored;
        final long passed = progress.endOffset - remaining - progress.position;
        progress.restored = restored;
        progress.position = progress.endOffset - remaining;
        taskProgress.restored(changelog, batch, Math.max(0, passed), false);
        final long batchEndOffset = progress.endOffset - remaining - 1;
        report(restoreListener -> restoreListener.onBatchRestored(changelog, store, batchEndOffset, batch));
    }

    /** The store reached the end of its changelog after {@code restored} records. */
    void restoreEnded(final String store, final String topic, final int partition, final long restored) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final Restoring progress = partitions.get(changelog);
        if (progress != null) {
            // What lies between the last record and the end (transaction markers) counts as passed too.
            taskProgress.restored(changelog, 0, Math.max(0, progress.endOffset - progress.position), false);
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

    /**
     * A standby replica of {@code store} starts following its changelog partition at {@code startOffset}; the
     * changelog ends at {@code endOffset} for now.
     */
    void standbyUpdateStarted(final String store, final String topic, final int partition, final long startOffset,
                              final long endOffset) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        followed.put(changelog, new Position(store, changelog, startOffset));
        taskProgress.changelogEnds(changelog, endOffset);
        reportStandby(standby -> standby.onUpdateStart(changelog, store, startOffset));
    }

    /**
     * The standby replica of {@code store} of task {@code subtopology}_{@code partition} put {@code batchSize} more
     * records into its store, up to {@code batchEndOffset}; the changelog ends at {@code currentEndOffset}.
     */
    void standbyBatchLoaded(final String store, final String topic, final int partition, final long subtopology,
                            final long batchEndOffset, final long batchSize, final long currentEndOffset) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final TaskId task = new TaskId((int) subtopology, partition);
        followed.put(changelog, new Position(store, changelog, batchEndOffset + 1));
        if (currentEndOffset >= 0) {
            taskProgress.changelogEnds(changelog, currentEndOffset);
        }
        reportStandby(standby ->
            standby.onBatchLoaded(changelog, store, task, batchEndOffset, batchSize, currentEndOffset));
    }

    /**
     * The standby replica of {@code store} stopped following its changelog partition, its store at
     * {@code storeOffset}: {@code promoted} (1) when its task became active on this client, otherwise it moved away.
     */
    void standbyUpdateSuspended(final String store, final String topic, final int partition, final long storeOffset,
                                final long currentEndOffset, final long promoted) {
        final TopicPartition changelog = new TopicPartition(topic, partition);
        final StandbyUpdateListener.SuspendReason reason = promoted != 0
            ? StandbyUpdateListener.SuspendReason.PROMOTED
            : StandbyUpdateListener.SuspendReason.MIGRATED;
        reportStandby(standby -> standby.onUpdateSuspended(changelog, store, storeOffset, currentEndOffset, reason));
        followed.remove(changelog);
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

    private void reportStandby(final Consumer<StandbyUpdateListener> report) {
        if (standbyListener == null) {
            return;
        }
        try {
            report.accept(standbyListener);
        } catch (final RuntimeException e) {
            LOG.error("The standby update listener failed; the standby replica goes on", e);
        }
    }
}
