package dev.sluice.streams.runtime.internals;

import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The changelog offset sum of a task's state, which Kafka Streams' assignor compares with the changelogs' end
 * offsets to find how far each client's copy of a task lags: the sum of the state manager's changelog offsets
 * (the next offset to read of each store, 0 for a store without one), {@code Long.MAX_VALUE} once it overflows.
 */
public final class TaskOffsetSums {

    private TaskOffsetSums() {
    }

    public static long sum(final Map<TopicPartition, Long> changelogOffsets) {
        long sum = 0;
        for (final long offset : changelogOffsets.values()) {
            sum += offset;
            if (sum < 0) {
                return Long.MAX_VALUE;
            }
        }
        return sum;
    }
}
