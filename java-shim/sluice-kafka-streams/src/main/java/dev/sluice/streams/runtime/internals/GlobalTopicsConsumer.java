package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The global consumer as Kafka Streams' {@code GlobalStateManagerImpl} sees it when Sluice's engine reads the
 * global topics. The state manager asks it, while it opens the stores, for each global topic's partitions and
 * then runs its restore loop; the engine restores the stores itself afterwards, through
 * {@link GlobalStateRunner#restore}, so the loop must read nothing: every partition's end offset is reported
 * as 0, at or below any position, and the loop ends at once. The position it ends at, which the state manager
 * takes as the partition's offset, is the store's committed offset, or the partition's log start for a store
 * without one (the partition's whole log is still to restore).
 */
final class GlobalTopicsConsumer extends EngineOwnedConsumer {

    /** So that Kafka Streams' restore loop ({@code while position < end}) reads nothing. */
    private static final long NOTHING_TO_READ = 0L;

    private final Map<TopicPartition, Long> logStarts;
    private final Map<TopicPartition, Long> positions = new HashMap<>();

    /** {@code logStarts}: every partition of the global topics with the first offset in its log. */
    GlobalTopicsConsumer(final Map<TopicPartition, Long> logStarts) {
        super("the global state manager only learns the global topics' partitions from it");
        this.logStarts = Map.copyOf(logStarts);
    }

    @Override
    public List<PartitionInfo> partitionsFor(final String topic) {
        final List<PartitionInfo> partitions = new ArrayList<>();
        for (final TopicPartition partition : logStarts.keySet()) {
            if (partition.topic().equals(topic)) {
                partitions.add(new PartitionInfo(topic, partition.partition(), null, null, null));
            }
        }
        partitions.sort((a, b) -> Integer.compare(a.partition(), b.partition()));
        return partitions;
    }

    @Override
    public List<PartitionInfo> partitionsFor(final String topic, final Duration timeout) {
        return partitionsFor(topic);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(final Collection<TopicPartition> partitions) {
        final Map<TopicPartition, Long> ends = new HashMap<>();
        for (final TopicPartition partition : partitions) {
            ends.put(partition, NOTHING_TO_READ);
        }
        return ends;
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(final Collection<TopicPartition> partitions, final Duration timeout) {
        return endOffsets(partitions);
    }

    @Override
    public void assign(final Collection<TopicPartition> partitions) {
        // The engine reads the partitions.
    }

    @Override
    public void unsubscribe() {
        positions.clear();
    }

    @Override
    public void seek(final TopicPartition partition, final long offset) {
        positions.put(partition, offset);
    }

    @Override
    public void seekToBeginning(final Collection<TopicPartition> partitions) {
        for (final TopicPartition partition : partitions) {
            positions.put(partition, logStart(partition));
        }
    }

    @Override
    public long position(final TopicPartition partition) {
        final Long position = positions.get(partition);
        return position != null ? position : logStart(partition);
    }

    @Override
    public long position(final TopicPartition partition, final Duration timeout) {
        return position(partition);
    }

    private long logStart(final TopicPartition partition) {
        final Long start = logStarts.get(partition);
        if (start == null) {
            throw new IllegalStateException(partition + " is not a partition of a global topic");
        }
        return start;
    }
}
