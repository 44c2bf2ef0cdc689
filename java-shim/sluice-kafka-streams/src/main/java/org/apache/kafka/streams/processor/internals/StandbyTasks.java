package org.apache.kafka.streams.processor.internals;

import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;

/**
 * Makes and recycles Kafka Streams' {@link StandbyTask}, a standby replica's task, for a runtime outside this
 * package: Kafka Streams keeps its constructor and its recycling to the package.
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

    /**
     * Recycles {@code standby}, suspended, into the state of its task becoming active on the same thread, as Kafka
     * Streams' task creator does: the standby task closes, its stores stay open and registered with its state
     * manager, which is an active task's from now on and logs with {@code activeLogContext}.
     */
    public static void recycleIntoActive(final StandbyTask standby, final LogContext activeLogContext) {
        standby.prepareRecycle();
        standby.stateMgr.transitionTaskType(Task.TaskType.ACTIVE, activeLogContext);
    }
}
