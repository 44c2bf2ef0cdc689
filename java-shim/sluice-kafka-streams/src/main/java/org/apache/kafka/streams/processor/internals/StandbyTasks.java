package org.apache.kafka.streams.processor.internals;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;

/**
 * Makes Kafka Streams' {@link StandbyTask}, a standby replica's task, for a runtime outside this package: Kafka
 * Streams keeps its constructor to the package.
 */
public final class StandbyTasks {

    private StandbyTasks() {
    }

    public static StandbyTask create(final TaskId id,
                                     final Set<TopicPartition> inputs,
                                     final ProcessorTopology topology,
                                     final TopologyConfig.TaskConfig config,
                                     final StreamsMetricsImpl metrics,
                                     final ProcessorStateManager stateManager,
                                     final StateDirectory stateDirectory,
                                     final ThreadCache cache,
                                     final InternalProcessorContext<?, ?> context) {
        return new StandbyTask(id, inputs, topology, config, metrics, stateManager, stateDirectory, cache, context);
    }
}
