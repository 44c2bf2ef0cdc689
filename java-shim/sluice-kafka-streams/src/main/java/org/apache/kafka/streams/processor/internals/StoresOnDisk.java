package org.apache.kafka.streams.processor.internals;

import dev.sluice.streams.runtime.internals.TaskCorruption;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.internals.StreamsConfigUtils;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;
import org.slf4j.Logger;

/**
 * Opens the stores of every task that has state on disk as a client starts, and closes them again, as
 * Kafka Streams' {@code KafkaStreams#start} does: a store that cannot be opened the way the topology
 * declares it (values of a layout it cannot read, say) fails the start, before any thread runs, and a
 * store whose values are to be upgraded is upgraded there. A task whose state is found corrupted is left
 * to the thread that gets it, which wipes and restores it. The changelog offsets of each task's stores are
 * what the client's group members report (as their sum) for a task they hold no replica of, as Kafka Streams
 * reports its task directories' checkpoints, and how far such a task's stores are while it waits unopened. In this package because Kafka Streams keeps its state managers'
 * helpers to itself.
 */
public final class StoresOnDisk {

    private StoresOnDisk() {
    }

    /** Returns the changelog offsets of the stores of each task whose stores opened. */
    public static Map<TaskId, Map<TopicPartition, Long>> openAndClose(final TopologyMetadata topologyMetadata,
                                                 final StateDirectory stateDirectory, final StreamsConfig config,
                                                 final StreamsMetricsImpl metrics, final Time time,
                                                 final LogContext logContext) {
        final Map<TaskId, Map<TopicPartition, Long>> changelogOffsets = new HashMap<>();
        if (!topologyMetadata.hasPersistentStores()) {
            return changelogOffsets;
        }
        final Logger log = logContext.logger(StoresOnDisk.class);
        final boolean eosEnabled = StreamsConfigUtils.eosEnabled(config);
        final ThreadCache noCache = new ThreadCache(logContext, 0, metrics);
        for (final StateDirectory.TaskDirectory directory : stateDirectory.listNonEmptyTaskDirectories()) {
            final TaskId id = StateManagerUtil.parseTaskDirectoryName(directory.file().getName(),
                directory.namedTopology());
            final ProcessorTopology topology = topologyMetadata.buildSubtopology(id);
            if (!topology.hasStateWithChangelogs()) {
                continue;
            }
            final Set<TopicPartition> inputs = topology.sourceTopics().stream()
                .map(topic -> new TopicPartition(topic, id.partition()))
                .collect(Collectors.toSet());
            final ProcessorStateManager stateManager = ProcessorStateManager.createStartupTaskStateManager(id,
                eosEnabled, logContext, stateDirectory, time, topology.storeToChangelogTopic(), inputs);
            final ProcessorContextImpl context = new ProcessorContextImpl(id, config, stateManager, metrics, noCache);
            final String logPrefix = "task [" + id + "] ";
            try {
                StateManagerUtil.registerStateStores(log, logPrefix, topology, stateManager, stateDirectory, context);
                changelogOffsets.put(id, Map.copyOf(stateManager.changelogOffsets()));
            } catch (final RuntimeException e) {
                if (TaskCorruption.of(e, id).isEmpty()) {
                    throw e;
                }
                log.warn("{}The task's local state is corrupted; the thread that gets the task will wipe and "
                    + "restore what it cannot trust", logPrefix, e);
            } finally {
                // Closed clean whatever happened: closing dirty under exactly-once wipes the whole task, where
                // its thread wipes only the stores found corrupted.
                StateManagerUtil.closeStateManager(log, logPrefix, true, eosEnabled, false, stateManager,
                    stateDirectory, Task.TaskType.ACTIVE);
            }
        }
        return changelogOffsets;
    }
}
