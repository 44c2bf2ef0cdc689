package dev.sluice.streams.runtime.internals;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.errors.TaskCorruptedException;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.ProcessorContextImpl;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.processor.internals.StandbyTask;
import org.apache.kafka.streams.processor.internals.StandbyTasks;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.TaskMetadataImpl;
import org.apache.kafka.streams.state.internals.ThreadCache;
import org.slf4j.Logger;

/**
 * Keeps the stores of a standby replica of one task (a warm-up replica is one too) with Kafka Streams' own
 * machinery, as a stream thread does: a {@link StandbyTask} over the sub-topology with a standby's
 * {@link ProcessorStateManager}, whose stores the engine restores into as it follows their changelogs. Each batch
 * is committed with its offsets at once, so a replica that restarts reads only what it had not read. When its task
 * becomes active on the same thread, the replica hands its stores over open, as Kafka Streams recycles a standby task:
 * nothing is closed or restored again. Its stores answer interactive queries that accept stale stores.
 */
final class StandbyTaskRunner implements StateRunner {

    private final TaskEnvironment environment;
    private final TaskId id;
    private final String thread;
    private final Logger log;
    private final LogContext logContext;
    // The current incarnation of the replica; a wipe replaces it.
    private volatile StandbyTask task;
    private volatile Set<TopicPartition> inputPartitions = Set.of();
    private ProcessorStateManager stateManager;
    private ProcessorTopology topology;
    private ProcessorContextImpl context;
    // Where the stores were as this incarnation opened, for lags asked before it follows its changelogs.
    private volatile List<RestoreProgress.Position> openedPositions = List.of();

    /** The stores of a replica handed over open to its task: the sub-topology they belong to, their state manager
     * (an active task's now) and the processor context they were opened with. */
    record HandedOver(ProcessorTopology topology, ProcessorStateManager stateManager, ProcessorContextImpl context) {
    }

    /** Creates the replica and opens its stores; failures propagate to the caller, which reports them. */
    StandbyTaskRunner(final TaskEnvironment environment, final TaskId id) {
        this.environment = environment;
        this.id = id;
        this.thread = Thread.currentThread().getName();
        this.logContext = new LogContext("stream-thread [" + thread + "] standby-task [" + id + "] ");
        this.log = logContext.logger(StandbyTaskRunner.class);
        build();
        environment.standbyOpened(this);
        environment.threadMetrics().stateUpdater().standbyTasksChanged(1);
    }

    TaskId id() {
        return id;
    }

    /** The engine thread that keeps the replica. */
    String thread() {
        return thread;
    }

    /** Kafka Streams' metadata of a standby task: its input partitions, no offsets. */
    TaskMetadata metadata() {
        return new TaskMetadataImpl(id, inputPartitions, Map.of(), Map.of(), Optional.empty());
    }

    /** The outermost store called {@code name} of this replica (read by queries that accept stale stores), or null. */
    StateStore store(final String name) {
        final StandbyTask current = task;
        return current == null ? null : current.store(name);
    }

    /** The changelog partitions of the replica's stores. */
    Set<TopicPartition> changelogs() {
        return Set.copyOf(stateManager.changelogOffsets().keySet());
    }

    /**
     * The sum of the changelog offsets its stores hold, as Kafka Streams' assignor wants it for a standby task
     * (a store without an offset counts nothing); read on the engine thread that owns the replica.
     */
    long changelogOffsetSum() {
        return TaskOffsetSums.sum(stateManager.changelogOffsets());
    }

    @Override
    public byte[] committedChangelogOffsets() {
        return guarded(() -> StateRunner.lastOffsetsInStores(stateManager.changelogOffsets()));
    }

    @Override
    public void wipeState() {
        guarded(() -> {
            log.info("Wiping the local state of the standby replica: its stores' offsets are outside their changelogs");
            closeQuietly(false);
            environment.wipeTaskDirectory(id);
            build();
            return null;
        });
    }

    @Override
    public void restore(final ByteBuffer records) {
        guarded(() -> {
            final Map<TopicPartition, List<ConsumerRecord<byte[], byte[]>>> byChangelog =
                RuntimeFraming.readConsumedRecords(records);
            byChangelog.forEach((changelog, batch) -> StateManagerRestore.restore(stateManager, changelog, batch));
            // What a changelog holds is committed: the stores commit it with its offsets at once.
            stateManager.commit();
            // The task's update-rate and update-total, as Kafka Streams records them for a standby task.
            task.recordRestoration(environment.time(), byChangelog.values().stream().mapToInt(List::size).sum(), 0,
                false);
            return null;
        });
    }

    /**
     * The runner of the replica's task, which becomes active on this thread and takes the replica's open stores
     * over; the replica is gone. Called by the engine in place of {@link #close}.
     *
     * @param inputs framed inputs, as {@link TaskFactory#create} takes them
     */
    public TaskRunner promote(final byte[] inputs) {
        return environment.promote(this, inputs);
    }

    /** Hands the replica's stores over, open, to its task becoming active: see {@link #promote}. */
    HandedOver handOver(final LogContext activeLogContext) {
        return guarded(() -> {
            environment.standbyClosed(this, stateManager.changelogOffsets());
            environment.threadMetrics().stateUpdater().standbyTasksChanged(-1);
            final StandbyTask current = task;
            task = null;
            current.suspend();
            StandbyTasks.recycleIntoActive(current, activeLogContext);
            return new HandedOver(topology, stateManager, context);
        });
    }

    @Override
    public void close(final boolean clean) {
        guarded(() -> {
            environment.standbyClosed(this, stateManager.changelogOffsets());
            environment.threadMetrics().stateUpdater().standbyTasksChanged(-1);
            closeQuietly(clean);
            task = null;
            return null;
        });
    }

    /** A new incarnation of the replica over the stores' committed state, its stores open. */
    private void build() {
        try {
            create();
            task.initializeIfNeeded();
        } catch (final TaskCorruptedException corrupted) {
            log.warn("The standby replica's local state is corrupted; wiping it", corrupted);
            closeQuietly(false);
            environment.wipeTaskDirectory(id);
            create();
            task.initializeIfNeeded();
        }
        recordOpenedPositions();
    }

    private void create() {
        final StreamsConfig config = environment.config();
        topology = environment.topologyMetadata().buildSubtopology(id);
        final Set<TopicPartition> inputs = TaskEnvironment.inputPartitions(topology, id);
        inputPartitions = inputs;
        stateManager = environment.stateManager(id, Task.TaskType.STANDBY, topology, inputs, logContext);
        // A standby replica caches nothing, as in Kafka Streams.
        final ThreadCache noCache = new ThreadCache(logContext, 0, environment.metrics());
        context = new ProcessorContextImpl(id, config, stateManager, environment.metrics(), noCache);
        task = StandbyTasks.create(id, inputs, topology, environment.taskSettings(), environment.metrics(), stateManager,
            environment.stateDirectory(), noCache, context);
    }

    private void recordOpenedPositions() {
        final Map<String, String> storeByChangelogTopic = new HashMap<>();
        topology.storeToChangelogTopic().forEach((store, topic) -> storeByChangelogTopic.put(topic, store));
        final List<RestoreProgress.Position> positions = new ArrayList<>();
        stateManager.changelogOffsets().forEach((changelog, offset) ->
            positions.add(new RestoreProgress.Position(storeByChangelogTopic.get(changelog.topic()), changelog, offset)));
        openedPositions = List.copyOf(positions);
    }

    /** Where the replica's stores were as it opened: each store's changelog partition and next offset to read. */
    List<RestoreProgress.Position> openedPositions() {
        return openedPositions;
    }

    /**
     * Closes the current incarnation; clean, its stores keep what they committed. Closing dirty is for a replica
     * about to be wiped or whose stores failed: a failure to suspend is logged.
     */
    private void closeQuietly(final boolean clean) {
        if (task == null) {
            return;
        }
        try {
            task.suspend();
        } catch (final RuntimeException e) {
            if (clean) {
                throw e;
            }
            log.warn("Suspending the standby replica before closing it dirty failed", e);
        }
        if (clean) {
            task.closeClean();
        } else {
            task.closeDirty();
        }
    }

    private <T> T guarded(final Supplier<T> upcall) {
        try {
            return upcall.get();
        } catch (final RuntimeException | Error e) {
            environment.reportFailure(e);
            throw e;
        }
    }
}
