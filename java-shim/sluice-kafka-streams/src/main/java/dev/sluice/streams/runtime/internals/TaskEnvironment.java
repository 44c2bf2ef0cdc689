package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AutoOffsetResetStrategy;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.TopologyConfig;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.internals.StreamsConfigUtils;
import org.apache.kafka.streams.internals.UpgradeFromValues;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.ClientUtils;
import org.apache.kafka.streams.processor.internals.ProcessorStateManager;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.processor.internals.StateDirectory;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.state.internals.SluiceThreadCache;
import org.apache.kafka.streams.state.internals.ThreadCache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the tasks of one application instance share, as a Kafka Streams instance shares it among its
 * stream threads: the topology, the config the tasks see, metrics, the state directory, one record cache
 * and one set of thread-level metrics per engine thread, and the registry of running tasks that interactive queries read from other threads.
 * As the engine's {@link TaskFactory} it also follows each engine thread's assignments, which the instance's
 * REBALANCING and RUNNING states follow.
 */
final class TaskEnvironment implements TaskFactory {

    private static final Logger LOG = LoggerFactory.getLogger(TaskEnvironment.class);

    private final TopologyMetadata topologyMetadata;
    private final StreamsConfig taskConfig;
    private final TopologyConfig topologyConfig;
    private final Time time;
    private final StreamsMetricsImpl metrics;
    private final StateDirectory stateDirectory;
    private final RuntimeListener listener;
    private final Function<String, List<PartitionInfo>> partitionLookup;
    private final long totalCacheBytes;
    /** Holders of a share of the record cache besides the engine threads: the global thread, when there is one. */
    private final int globalThreads;
    private final Map<Thread, EngineThreadCache> threadCaches = new ConcurrentHashMap<>();
    private final Map<String, EngineThreadMetrics> threadMetrics = new ConcurrentHashMap<>();
    private final Map<TaskId, StreamTaskRunner> runningTasks = new ConcurrentHashMap<>();
    /** The active tasks restoring their stores, by changelog partition, for their restore metrics. */
    private final Map<TopicPartition, StreamTaskRunner> restoringByChangelog = new ConcurrentHashMap<>();
    /** Where each changelog partition ends as last known from restoring or following it. */
    private final Map<TopicPartition, Long> changelogEnds = new ConcurrentHashMap<>();
    private final EngineThreadAssignments assignments;
    private final UUID processId;
    private volatile GlobalStateRunner globalRunner;
    /** The threads' group members and Kafka Streams' stream thread objects, whose states follow the threads'. */
    private final StreamThreads streamThreads;
    /** The engine threads' group members. */
    private final Set<EngineGroupMember> members = ConcurrentHashMap.newKeySet();
    /** Set once the client asked the application to shut down: a member that joins after asks too. */
    private volatile boolean applicationShutdownRequested;
    /** The standby replicas of this client's threads, by task. */
    private final Map<TaskId, StandbyTaskRunner> standbys = new ConcurrentHashMap<>();
    /**
     * The changelog offsets of the stores of each task this client has on disk but holds no replica of: as found at
     * start, and as each replica left them when it closed.
     */
    private final Map<TaskId, Map<TopicPartition, Long>> changelogOffsetsOnDisk = new ConcurrentHashMap<>();
    /** The changelog topic of each logged store of each sub-topology, by sub-topology, as first asked for. */
    private final Map<Integer, Map<String, String>> changelogTopicsOfStores = new ConcurrentHashMap<>();

    TaskEnvironment(final TopologyMetadata topologyMetadata,
                    final StreamsConfig config,
                    final Time time,
                    final StreamsMetricsImpl metrics,
                    final StateDirectory stateDirectory,
                    final RuntimeListener listener,
                    final Function<String, List<PartitionInfo>> partitionLookup,
                    final UUID processId,
                    final StreamThreads streamThreads) {
        this.topologyMetadata = topologyMetadata;
        this.taskConfig = taskConfig(config);
        // Sluice's runtime runs one unnamed topology (EngineTopology rejects named ones).
        final TopologyConfig applicationTopology = topologyMetadata.lookupBuilderForNamedTopology(null).topologyConfigs();
        this.topologyConfig = new TopologyConfig(applicationTopology.topologyName, taskConfig, applicationTopology.topologyOverrides);
        this.time = time;
        this.metrics = metrics;
        this.stateDirectory = stateDirectory;
        this.listener = listener;
        this.partitionLookup = partitionLookup;
        this.processId = processId;
        this.totalCacheBytes = Math.max(0L, StreamsConfigUtils.totalCacheSize(config));
        this.globalThreads = topologyMetadata.hasGlobalTopology() ? 1 : 0;
        this.assignments = new EngineThreadAssignments(topologyMetadata.numStreamThreads(config));
        this.streamThreads = streamThreads;
    }

    @Override
    public EngineGroupMember joinGroup(final int thread, final String[] topics, final long engineMember) {
        final EngineGroupMember member = streamThreads.join(thread, engineMember, this, topics);
        members.add(member);
        if (applicationShutdownRequested) {
            member.requestApplicationShutdown();
        }
        return member;
    }

    /**
     * The config tasks run with: the application's, with transactional state stores on. Sluice's engine
     * commits the stores after every commit's transaction under exactly-once too, so its stores hold
     * their writes back until then, and a dirty close needs no wipe of local state.
     */
    static StreamsConfig taskConfig(final StreamsConfig config) {
        final Map<String, Object> originals = new HashMap<>(config.originals());
        final Object transactional = originals.get(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        if (transactional != null && !Boolean.parseBoolean(String.valueOf(transactional))) {
            LOG.warn("{}=false is ignored: state stores are always transactional in Sluice's runtime",
                StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG);
        }
        originals.put(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, true);
        // The application's config was logged when it was made; this copy differs in one key.
        return new ClientUtils.QuietStreamsConfig(originals);
    }

    /** Creates the runner of a task on the calling engine thread; {@code inputs} as {@link RuntimeFraming#readInputs}. */
    @Override
    public StreamTaskRunner create(final int subtopology, final int partition, final byte[] inputs) {
        return createTask(new TaskId(subtopology, partition), inputs, null);
    }

    /**
     * The runner of the task of {@code standby}, a standby replica on the calling engine thread, becoming active
     * there: it takes the replica's open stores over.
     */
    StreamTaskRunner promote(final StandbyTaskRunner standby, final byte[] inputs) {
        return createTask(standby.id(), inputs, standby);
    }

    private StreamTaskRunner createTask(final TaskId id, final byte[] inputs, final StandbyTaskRunner promoted) {
        try {
            final Map<TopicPartition, OffsetAndMetadata> committed = new LinkedHashMap<>();
            RuntimeFraming.readInputs(inputs).forEach((input, offset) -> {
                if (offset != null) {
                    committed.put(input, offset);
                } else if (EngineTopology.resetStrategy(topologyMetadata, taskConfig, input.topic()).type()
                    == AutoOffsetResetStrategy.StrategyType.NONE) {
                    // Where Kafka Streams' stream thread finds that its consumer has nowhere to start.
                    throw new StreamsException("No valid committed offset found for input topic " + input.topic()
                        + " (partition " + input.partition() + ") and no valid reset policy configured. You need to "
                        + "set configuration parameter \"auto.offset.reset\" or specify a topic specific reset policy "
                        + "via StreamsBuilder#stream(..., Consumed.with(AutoOffsetReset)) or StreamsBuilder#table(..., "
                        + "Consumed.with(AutoOffsetReset))", new NoOffsetForPartitionException(input));
                }
            });
            final StreamTaskRunner task = new StreamTaskRunner(this, id, committed, promoted);
            threadMetrics().taskCreated();
            return task;
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    /** Creates the standby replica of a task on the calling engine thread. */
    @Override
    public StandbyTaskRunner createStandby(final int subtopology, final int partition) {
        try {
            return new StandbyTaskRunner(this, new TaskId(subtopology, partition));
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    /** Creates the runner of the global stores on the engine's global thread; {@code logStarts} as {@link OffsetFraming#read}. */
    @Override
    public GlobalStateRunner createGlobal(final byte[] logStarts) {
        try {
            globalRunner = new GlobalStateRunner(this, OffsetFraming.read(logStarts));
            return globalRunner;
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    @Override
    public void assignmentStarted() {
        try {
            assignments.started(Thread.currentThread().getName());
            stateChanged(Thread.currentThread().getName());
            listener.onRebalanceStatusChanged();
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    /**
     * The calling engine thread's member joins the group again right after the assignment it is about to hand on:
     * the thread stays in its rebalance until the follow-up's assignment.
     */
    void followUpRebalanceDue() {
        assignments.followUpDue(Thread.currentThread().getName());
    }

    @Override
    public void assigned(final int[] subtopologies, final int[] partitions) {
        try {
            final Set<TaskId> tasks = new HashSet<>();
            for (int i = 0; i < subtopologies.length; i++) {
                tasks.add(new TaskId(subtopologies[i], partitions[i]));
            }
            assignments.assigned(Thread.currentThread().getName(), tasks, runningTasks.keySet());
            stateChanged(Thread.currentThread().getName());
            listener.onRebalanceStatusChanged();
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    @Override
    public long milliseconds() {
        return time.milliseconds();
    }

    @Override
    public void loopTurned(final long pollNs, final int polledRecords, final long processNs, final long punctuateNs,
                           final long commitNs, final long totalNs) {
        try {
            final EngineThreadCache cache = threadCaches.get(Thread.currentThread());
            if (cache != null) {
                cache.resize(cacheBytesPerThread());
            }
            threadMetrics().loopTurned(pollNs, polledRecords, processNs, punctuateNs, commitNs, totalNs,
                time.milliseconds());
        } catch (final RuntimeException | Error e) {
            reportFailure(e);
            throw e;
        }
    }

    /** Each engine thread's state, by name, once it has reported its first rebalance. */
    Map<String, String> threadStates() {
        return assignments.threadStates();
    }

    /** Whether each engine thread has its assignment and runs all its tasks, and how many rebalances began. */
    EngineRuntime.RebalanceStatus rebalanceStatus() {
        return assignments.status();
    }

    TopologyMetadata topologyMetadata() {
        return topologyMetadata;
    }

    StreamsConfig config() {
        return taskConfig;
    }

    /**
     * The task settings of the topology (handlers, timestamp extractor, buffering), with transactional
     * state stores on as in {@link #config()}; new handler instances for each task, as Kafka Streams makes.
     */
    TopologyConfig.TaskConfig taskSettings() {
        return topologyConfig.getTaskConfig();
    }

    Time time() {
        return time;
    }

    /** The input partitions of task {@code id} of {@code topology}. */
    static Set<TopicPartition> inputPartitions(final ProcessorTopology topology, final TaskId id) {
        final Set<TopicPartition> inputs = new HashSet<>();
        for (final String topic : topology.sourceTopics()) {
            inputs.add(new TopicPartition(topic, id.partition()));
        }
        return Set.copyOf(inputs);
    }

    /** A state manager of task {@code id} (an active task's or a standby replica's), as a stream thread makes one. */
    ProcessorStateManager stateManager(final TaskId id, final Task.TaskType type, final ProcessorTopology topology,
                                       final Set<TopicPartition> inputs, final LogContext logContext) {
        final String upgradeFrom = taskConfig.getString(StreamsConfig.UPGRADE_FROM_CONFIG);
        return new ProcessorStateManager(id, type, StreamsConfigUtils.eosEnabled(taskConfig), true, logContext,
            stateDirectory, time, topology.storeToChangelogTopic(), inputs,
            upgradeFrom == null ? null : UpgradeFromValues.fromString(upgradeFrom));
    }

    /** Deletes the state directory of task {@code id}, whose state cannot be trusted. */
    void wipeTaskDirectory(final TaskId id) {
        final File directory = stateDirectory.getOrCreateDirectoryForTask(id);
        try {
            Utils.delete(directory);
        } catch (final IOException e) {
            throw new ProcessorStateException("Could not wipe the state directory " + directory + " of task " + id, e);
        }
    }

    StreamsMetricsImpl metrics() {
        return metrics;
    }

    StateDirectory stateDirectory() {
        return stateDirectory;
    }

    Function<String, List<PartitionInfo>> partitionLookup() {
        return partitionLookup;
    }

    /** The global thread's share of the record cache, as each engine thread's: it changes as they come and go. */
    long globalCacheBytes() {
        return cacheBytesPerThread();
    }

    /**
     * The record cache of the calling engine thread, shared by its tasks as a stream thread's is. It takes
     * its share of {@code statestore.cache.max.bytes} anew at each turn of the thread's loop, on the thread
     * itself, since a cache that shrinks evicts, which forwards records, as Kafka Streams' stream threads do.
     */
    ThreadCache threadCache() {
        return threadCaches.computeIfAbsent(Thread.currentThread(), thread -> {
            final long bytes = cacheBytesPerThread();
            return new EngineThreadCache(
                new SluiceThreadCache(new LogContext("stream-thread [" + thread.getName() + "] "), bytes, metrics),
                bytes);
        }).cache;
    }

    /**
     * Each engine thread's, and the global thread's, share of {@code statestore.cache.max.bytes}, as Kafka
     * Streams splits it between its live threads: it changes as engine threads are added and removed.
     */
    long cacheBytesPerThread() {
        return totalCacheBytes / Math.max(1, assignments.threadCount() + globalThreads);
    }

    /** The thread-level metrics of the calling engine thread. */
    EngineThreadMetrics threadMetrics() {
        return threadMetrics(Thread.currentThread().getName());
    }

    /**
     * The thread-level metrics of engine thread {@code name}, registered when the thread starts, as Kafka
     * Streams registers a stream thread's before it runs (or when it first asks, if it is quicker).
     */
    private EngineThreadMetrics threadMetrics(final String name) {
        return threadMetrics.computeIfAbsent(name, thread ->
            new EngineThreadMetrics(thread, metrics, time.milliseconds(), processId.toString(),
                () -> streamThreads.state(thread)));
    }

    /** The engine started with threads {@code names}. */
    void threadsStarted(final String[] names) {
        for (final String name : names) {
            threadMetrics(name);
            stateChanged(name);
        }
    }

    /** How many engine threads run. */
    int aliveThreads() {
        return assignments.threadCount();
    }

    /** One more engine thread runs, {@code name}. */
    void threadAdded(final String name) {
        assignments.threadAdded(name);
        threadMetrics(name);
        stateChanged(name);
    }

    /** An engine thread that was asked to stop did not: it counts again. */
    void threadKept() {
        assignments.threadKept();
    }

    /**
     * An engine thread was asked to stop: it no longer counts, and the others' shares of the cache grow
     * at their next loop turn, as Kafka Streams resizes them before the thread has ended.
     */
    void threadStopping() {
        assignments.threadStopping();
    }

    /**
     * Engine thread {@code name}'s stream thread object takes the state its rebalances amount to now, telling its
     * listener on the calling thread, as a stream thread tells it as it changes.
     */
    private void stateChanged(final String name) {
        streamThreads.follow(name, assignments.threadState(name));
    }

    /** Engine thread {@code name} has ended: what it reported, its metrics and its cache go. */
    void threadGone(final String name) {
        assignments.threadGone(name);
        streamThreads.ended(name);
        final EngineThreadMetrics gone = threadMetrics.remove(name);
        if (gone != null) {
            gone.remove();
        }
        threadCaches.entrySet().removeIf(entry -> {
            if (!entry.getKey().getName().equals(name)) {
                return false;
            }
            entry.getValue().close();
            return true;
        });
    }

    /**
     * An engine thread's (or the global thread's) record cache and the size it was last given; only that
     * thread resizes it.
     */
    static final class EngineThreadCache {
        final SluiceThreadCache cache;
        private long bytes;

        EngineThreadCache(final SluiceThreadCache cache, final long bytes) {
            this.cache = cache;
            this.bytes = bytes;
        }

        void resize(final long newBytes) {
            if (newBytes != bytes) {
                cache.resize(newBytes);
                bytes = newBytes;
            }
        }

        /** Releases the cache's entries, once its thread is done with its stores. */
        void close() {
            cache.close();
        }
    }

    /** Removes the engine threads' metrics; called once the engine's threads have stopped. */
    void close() {
        threadMetrics.values().forEach(EngineThreadMetrics::remove);
        threadMetrics.clear();
        threadCaches.values().forEach(EngineThreadCache::close);
        threadCaches.clear();
    }

    /** Records {@code error} for the application before it stops the calling engine thread. */
    void reportFailure(final Throwable error) {
        listener.onThreadFailure(Thread.currentThread().getName(), error);
    }

    void running(final StreamTaskRunner task) {
        runningTasks.put(task.id(), task);
        listener.onTaskRunning(task.id());
        if (assignments.taskRunning(Thread.currentThread().getName(), task.id())) {
            stateChanged(Thread.currentThread().getName());
            listener.onRebalanceStatusChanged();
        }
    }

    void stopped(final StreamTaskRunner task) {
        runningTasks.remove(task.id(), task);
    }

    /** {@code task} restores its stores from {@code changelogs} until {@link #restoringEnded}. */
    void restoring(final StreamTaskRunner task, final Collection<TopicPartition> changelogs) {
        changelogs.forEach(changelog -> restoringByChangelog.put(changelog, task));
    }

    void restoringEnded(final StreamTaskRunner task, final Collection<TopicPartition> changelogs) {
        changelogs.forEach(changelog -> restoringByChangelog.remove(changelog, task));
    }

    /** How the engine reads the changelogs of the tasks' stores, for what the tasks record and report. */
    RestoreProgress.TaskProgress taskProgress() {
        return new RestoreProgress.TaskProgress() {
            @Override
            public void restored(final TopicPartition changelog, final long records, final long offsets,
                                 final boolean starting) {
                final StreamTaskRunner task = restoringByChangelog.get(changelog);
                if (task != null) {
                    task.recordRestoration(records, offsets, starting);
                }
            }

            @Override
            public void changelogEnds(final TopicPartition changelog, final long endOffset) {
                changelogEnds.put(changelog, endOffset);
            }
        };
    }

    /**
     * Asks every client of the application to shut down through the group, by the engine threads' members; true
     * when some member will carry the request, false when no engine thread is in the group (one that joins later
     * carries it).
     */
    boolean requestApplicationShutdown() {
        applicationShutdownRequested = true;
        members.forEach(EngineGroupMember::requestApplicationShutdown);
        return !members.isEmpty();
    }

    void memberClosed(final EngineGroupMember member) {
        members.remove(member);
    }

    /** Takes the changelog offsets of the stores of the task directories found on disk as the client started. */
    void changelogOffsetsOnDisk(final Map<TaskId, Map<TopicPartition, Long>> offsets) {
        changelogOffsetsOnDisk.putAll(offsets);
    }

    /** A task's runner opened its state: it reports the task's offsets from now on. */
    void stateOpened(final TaskId task) {
        changelogOffsetsOnDisk.remove(task);
    }

    /** A task's runner closed its state, whose stores hold {@code changelogOffsets} (none: stateless). */
    void stateClosed(final TaskId task, final Map<TopicPartition, Long> changelogOffsets) {
        if (!changelogOffsets.isEmpty()) {
            changelogOffsetsOnDisk.put(task, Map.copyOf(changelogOffsets));
        }
    }

    void standbyOpened(final StandbyTaskRunner standby) {
        standbys.put(standby.id(), standby);
        stateOpened(standby.id());
    }

    void standbyClosed(final StandbyTaskRunner standby, final Map<TopicPartition, Long> changelogOffsets) {
        standbys.remove(standby.id(), standby);
        stateClosed(standby.id(), changelogOffsets);
    }

    /**
     * The changelog offset sums one thread's group member reports to Kafka Streams' assignor: each active task it
     * holds counts as running ({@link Task#LATEST_OFFSET}), so that it stays where it is; each of its standby
     * replicas by what its stores hold; and the state on disk that no replica of this client holds, as last known.
     * Called on the member's engine thread, which owns the standby replicas it reports.
     */
    Map<TaskId, Long> taskOffsetSums(final Set<TaskId> activeTasks, final Set<TaskId> standbyTasks) {
        final Map<TaskId, Long> sums = new HashMap<>();
        changelogOffsetsOnDisk.forEach((task, offsets) -> sums.put(task, TaskOffsetSums.sum(offsets)));
        for (final TaskId task : standbyTasks) {
            final StandbyTaskRunner standby = standbys.get(task);
            if (standby != null) {
                sums.put(task, standby.changelogOffsetSum());
            }
        }
        activeTasks.forEach(task -> sums.put(task, Task.LATEST_OFFSET));
        return sums;
    }

    /**
     * The changelog end offset sums of the tasks whose stores one thread's group member brings up to date, its
     * restoring active tasks and its standby replicas, which Kafka Streams' members report under the streams
     * protocol: {@link Long#MAX_VALUE} for a task with a changelog whose end is not known yet. Called on the
     * member's engine thread, which owns those tasks.
     */
    Map<TaskId, Long> taskEndOffsetSums(final Set<TaskId> activeTasks, final Set<TaskId> standbyTasks) {
        final Map<TaskId, Set<TopicPartition>> changelogsByTask = new HashMap<>();
        restoringByChangelog.forEach((changelog, task) -> {
            if (activeTasks.contains(task.id())) {
                changelogsByTask.computeIfAbsent(task.id(), id -> new HashSet<>()).add(changelog);
            }
        });
        for (final TaskId task : standbyTasks) {
            final StandbyTaskRunner standby = standbys.get(task);
            if (standby != null) {
                changelogsByTask.put(task, standby.changelogs());
            }
        }
        final Map<TaskId, Long> sums = new HashMap<>();
        changelogsByTask.forEach((task, changelogs) -> sums.put(task, endOffsetSum(changelogs)));
        return sums;
    }

    private long endOffsetSum(final Set<TopicPartition> changelogs) {
        long sum = 0;
        for (final TopicPartition changelog : changelogs) {
            final Long end = changelogEnds.get(changelog);
            if (end == null || end > Long.MAX_VALUE - sum) {
                return Long.MAX_VALUE;
            }
            sum += end;
        }
        return sum;
    }

    /** The metadata of the standby replicas this client keeps, by the engine thread that keeps them. */
    Map<String, Set<TaskMetadata>> standbyTasks() {
        final Map<String, Set<TaskMetadata>> byThread = new HashMap<>();
        standbys.values().forEach(standby ->
            byThread.computeIfAbsent(standby.thread(), thread -> new HashSet<>()).add(standby.metadata()));
        return byThread;
    }

    /**
     * The store {@code storeName} of each running task and, where no running task has one, of each standby
     * replica of this client, keyed by partition.
     */
    Map<Integer, EngineRuntime.QueryableStore> queryableStores(final String storeName) {
        final Map<Integer, EngineRuntime.QueryableStore> stores = new HashMap<>();
        for (final StreamTaskRunner task : runningTasks.values()) {
            final StateStore store = task.store(storeName);
            if (store != null) {
                stores.put(task.id().partition(), new EngineRuntime.QueryableStore(store, true, streamThreads.state(task.thread())));
            }
        }
        for (final StandbyTaskRunner standby : standbys.values()) {
            final StateStore store = standby.store(storeName);
            if (store != null) {
                stores.putIfAbsent(standby.id().partition(),
                    new EngineRuntime.QueryableStore(store, false, streamThreads.state(standby.thread())));
            }
        }
        return stores;
    }

    /** The store {@code storeName} of each running task, keyed by partition. */
    Map<Integer, StateStore> localStores(final String storeName) {
        final Map<Integer, StateStore> stores = new HashMap<>();
        for (final StreamTaskRunner task : runningTasks.values()) {
            final StateStore store = task.store(storeName);
            if (store != null) {
                stores.put(task.id().partition(), store);
            }
        }
        return stores;
    }

    /**
     * Where the stores are of the tasks this client holds without reading their changelogs: an active task held
     * unopened while processing is paused, its stores as last left on disk (at 0 when there are none), as Kafka Streams
     * reports a task its state updater holds paused; a standby replica that has not begun to follow its changelogs,
     * as it opened. Read from any thread.
     */
    List<RestoreProgress.Position> idleStorePositions() {
        final List<RestoreProgress.Position> positions = new ArrayList<>();
        for (final TaskId task : assignments.waitingTasks()) {
            if (runningTasks.containsKey(task)) {
                continue;
            }
            final Map<TopicPartition, Long> onDisk = changelogOffsetsOnDisk.getOrDefault(task, Map.of());
            final Map<String, String> changelogTopics = changelogTopicsOfStores.computeIfAbsent(task.subtopology(),
                subtopology -> Map.copyOf(topologyMetadata.buildSubtopology(task).storeToChangelogTopic()));
            changelogTopics.forEach((store, topic) -> {
                final TopicPartition changelog = new TopicPartition(topic, task.partition());
                if (!restoringByChangelog.containsKey(changelog)) {
                    positions.add(new RestoreProgress.Position(store, changelog, onDisk.getOrDefault(changelog, 0L)));
                }
            });
        }
        standbys.values().forEach(standby -> positions.addAll(standby.openedPositions()));
        return positions;
    }

    /** The bytes the running tasks' stores and the global stores hold uncommitted, summed; read from any thread. */
    long uncommittedBytes() {
        final GlobalStateRunner global = globalRunner;
        long total = global == null ? 0 : global.currentUncommittedBytes();
        for (final StreamTaskRunner task : runningTasks.values()) {
            total += task.currentUncommittedBytes();
        }
        return total;
    }

    /** The running tasks' metadata, by task. */
    Map<TaskId, TaskMetadata> localTasks() {
        final Map<TaskId, TaskMetadata> tasks = new HashMap<>();
        for (final StreamTaskRunner task : runningTasks.values()) {
            // A task closing meanwhile has none.
            final TaskMetadata metadata = task.metadata();
            if (metadata != null) {
                tasks.put(task.id(), metadata);
            }
        }
        return tasks;
    }
}
