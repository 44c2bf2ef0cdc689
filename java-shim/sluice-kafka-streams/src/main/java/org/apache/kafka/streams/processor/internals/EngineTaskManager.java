package org.apache.kafka.streams.processor.internals;

import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;

/**
 * What Kafka Streams' partition assignor asks of a stream thread's task manager, answered for a thread whose
 * tasks the engine runs: the topology, the process id, the offset sums of the tasks this client holds state for
 * (which keep a stateful task where its state is), the start of a rebalance, and the assignment it computed. The
 * engine's thread owns the tasks, so none are made here; the assignment is handed on as it comes. In this package
 * because Kafka Streams keeps the assignor's calls to itself; the constructor is given only what those calls use.
 */
public final class EngineTaskManager extends TaskManager {

    private final String logPrefix;
    private final Supplier<Map<TaskId, Long>> taskOffsetSums;
    private final BiConsumer<Map<TaskId, Set<TopicPartition>>, Map<TaskId, Set<TopicPartition>>> assignment;
    private boolean rebalanceInProgress;
    private Set<String> rebalanceTopics = Set.of();

    /**
     * @param taskOffsetSums the sum of the changelog offsets each task's state holds on this client, or
     *                       {@link Task#LATEST_OFFSET} for a running stateful active task, as Kafka Streams reports
     * @param assignment     takes each assignment: active tasks with their input partitions, standby tasks with theirs
     */
    public EngineTaskManager(final Time time, final ProcessId processId, final String logPrefix,
                             final TopologyMetadata topologyMetadata, final Supplier<Map<TaskId, Long>> taskOffsetSums,
                             final BiConsumer<Map<TaskId, Set<TopicPartition>>, Map<TaskId, Set<TopicPartition>>> assignment) {
        super(time, null, processId, logPrefix, null, null, null, topologyMetadata, null, null, null, null);
        this.logPrefix = logPrefix;
        this.taskOffsetSums = taskOffsetSums;
        this.assignment = assignment;
    }

    @Override
    public Map<TaskId, Long> taskOffsetSums() {
        return taskOffsetSums.get();
    }

    /** A pattern-subscribed topology learns the topics its sources match here, as Kafka Streams' does. */
    @Override
    void handleRebalanceStart(final Set<String> subscribedTopics) {
        topologyMetadata().addSubscribedTopicsFromMetadata(subscribedTopics, logPrefix);
        rebalanceTopics = Set.copyOf(subscribedTopics);
        rebalanceInProgress = true;
    }

    /** The topics the member was subscribed to as the latest rebalance began. */
    public Set<String> rebalanceTopics() {
        return rebalanceTopics;
    }

    /** Public here: the member's rebalance listener, outside this package, ends a rebalance as Kafka Streams' does. */
    @Override
    public void handleRebalanceComplete() {
        rebalanceInProgress = false;
    }

    @Override
    public boolean rebalanceInProgress() {
        return rebalanceInProgress;
    }

    @Override
    public void handleAssignment(final Map<TaskId, Set<TopicPartition>> activeTasks,
                                 final Map<TaskId, Set<TopicPartition>> standbyTasks) {
        assignment.accept(Map.copyOf(activeTasks), Map.copyOf(standbyTasks));
    }
}
