package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.NativeLibrary;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.StateDirectory;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/**
 * One application instance's run on Sluice's engine: the engine does the Kafka I/O, commits and
 * restores; its threads run the tasks with Kafka Streams' own task machinery ({@link StreamTaskRunner}).
 * {@code KafkaStreams} drives it.
 *
 * <p>Global stores ({@code GlobalKTable}, {@code addGlobalStore}) are kept by Kafka Streams' own global
 * machinery ({@link GlobalStateRunner}) and driven by the engine's global thread, which reads the global
 * topics with the engine's consumer (the {@code global.consumer.*} settings) and hands their records over in
 * batches; no Java consumer runs. As in Kafka Streams, {@link #start()} returns once the global stores are
 * restored to their topics' end, and no task runs before; the stores commit with their offsets every commit
 * interval, so a restart restores only what follows. Tasks read them as in Kafka Streams.
 *
 * <p>The topology must have been built and rewritten with the config
 * ({@link TopologyMetadata#buildAndRewriteTopology()}), as {@code KafkaStreams} does when it is created.
 */
public final class EngineRuntime implements AutoCloseable {

    /** The keys each client has, by the prefix that addresses that client in a Streams config. */
    private static final Map<String, Set<String>> CLIENT_KEYS_BY_PREFIX = Map.of(
        StreamsConfig.CONSUMER_PREFIX, ConsumerConfig.configNames(),
        StreamsConfig.PRODUCER_PREFIX, ProducerConfig.configNames(),
        StreamsConfig.ADMIN_CLIENT_PREFIX, AdminClientConfig.configNames());

    private final TopologyMetadata topologyMetadata;
    private final StreamsConfig config;
    private final Metrics ownMetrics;
    private final StateDirectory ownStateDirectory;
    private final StreamThreads ownStreamThreads;
    private final TopicPartitionLookup partitionLookup;
    private final TaskEnvironment environment;
    private StateRestoreListener restoreListener;
    private StandbyUpdateListener standbyListener;
    /** What the engine restores, heard from its threads; null until it starts. */
    private volatile RestoreProgress restoreProgress;
    /** The topics the pattern sources match, when the topology has any; known once started. */
    private volatile PatternSubscription patternSubscription;
    private volatile long handle;
    private volatile boolean closed;
    /** Held while the engine is told whether the topology is paused, so that the latest state is the one it keeps. */
    private final Object pauseLock = new Object();
    /**
     * Held while an engine thread is added, removed, reaped or taken out, from the engine's change to the
     * bookkeeping of it: a number freed by one is given to the next, and what the thread that had it
     * reported must be forgotten before its successor reports under the same name.
     */
    private final Object threadChanges = new Object();

    public EngineRuntime(final TopologyMetadata topologyMetadata,
                         final StreamsConfig config,
                         final Time time,
                         final RuntimeListener listener) {
        this(topologyMetadata, config, time, listener, null, null, UUID.randomUUID(), null);
    }

    /** Where this client serves queries ({@code application.server}), or nowhere. */
    private static HostInfo thisHost(final StreamsConfig config) {
        final HostInfo host = HostInfo.buildFromEndpoint(config.getString(StreamsConfig.APPLICATION_SERVER_CONFIG));
        return host == null ? HostInfo.unavailable() : host;
    }

    /**
     * A runtime whose tasks record their metrics in {@code metrics} and keep their state in
     * {@code stateDirectory}, both the caller's to close; either may be null for the runtime's own.
     * {@code processId} is the instance's, as its thread metrics are tagged. {@code streamThreads} are the client's
     * threads' group members and stream thread objects, the caller's to close; null for the runtime's own.
     */
    public EngineRuntime(final TopologyMetadata topologyMetadata,
                         final StreamsConfig config,
                         final Time time,
                         final RuntimeListener listener,
                         final StreamsMetricsImpl metrics,
                         final StateDirectory stateDirectory,
                         final UUID processId,
                         final StreamThreads streamThreads) {
        this.topologyMetadata = topologyMetadata;
        this.config = config;
        this.ownMetrics = metrics == null ? newMetrics(config, time) : null;
        this.ownStateDirectory = stateDirectory == null ? lockedStateDirectory(topologyMetadata, config, time) : null;
        this.partitionLookup = new TopicPartitionLookup(config);
        final StreamsMetricsImpl streamsMetrics = metrics == null
            ? new StreamsMetricsImpl(ownMetrics, config.getString(StreamsConfig.CLIENT_ID_CONFIG), time)
            : metrics;
        this.ownStreamThreads = streamThreads == null
            ? new StreamThreads(config, topologyMetadata, processId, config.getString(StreamsConfig.CLIENT_ID_CONFIG),
                new StreamsMetadataState(topologyMetadata, thisHost(config), new LogContext()), time)
            : null;
        this.environment = new TaskEnvironment(topologyMetadata, config, time, streamsMetrics,
            stateDirectory == null ? ownStateDirectory : stateDirectory, listener, partitionLookup, processId,
            streamThreads == null ? ownStreamThreads : streamThreads);
    }

    /**
     * Starts the engine's threads, paused when the topology is ({@link TopologyMetadata#isPaused}); returns
     * once the global stores, if any, are restored. A pause or resume made while this runs is passed on by the
     * next {@link #followPause()}.
     *
     * @throws UnsupportedOperationException for a topology Sluice's runtime cannot run yet (see {@link EngineTopology#describe})
     * @throws org.apache.kafka.common.config.ConfigException for a bad config value
     * @throws org.apache.kafka.streams.errors.StreamsException when the engine cannot start
     */
    public synchronized void start() {
        if (handle != 0 || closed) {
            throw new IllegalStateException("The engine runtime can be started only once");
        }
        final PatternSubscription patterns =
            PatternSubscription.of(topologyMetadata, config, environment.time(), partitionLookup::topicNames);
        patternSubscription = patterns;
        final byte[] topology = EngineTopology.json(topologyMetadata, config, patterns == null ? Set.of() : patterns.matched());
        NativeLibrary.load();
        final RestoreProgress progress = new RestoreProgress(restoreListener, standbyListener, environment.taskProgress());
        restoreProgress = progress;
        final Map<String, String> properties = engineProperties(config);
        // As Kafka Streams runs a topology of global stores only: with the global thread alone.
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, String.valueOf(topologyMetadata.numStreamThreads(config)));
        handle = NativeEngine.start(topology, RuntimeFraming.properties(properties), environment,
            progress, isTopologyPaused());
        environment.threadsStarted(NativeEngine.threadNames(handle));
    }

    /**
     * When the topology has pattern sources and {@code metadata.max.age.ms} passed since they were last matched:
     * matches them against the cluster's topics again, and hands the engine the topology with the topics they
     * match now, if they changed. Called by the client's supervisor.
     */
    public synchronized void refreshPatternSubscription() {
        final PatternSubscription patterns = patternSubscription;
        if (patterns == null || handle == 0 || closed || !patterns.refresh()) {
            return;
        }
        NativeEngine.updateTopology(handle, EngineTopology.json(topologyMetadata, config, patterns.matched()));
    }

    /**
     * Tells the engine whether the topology is paused now ({@link TopologyMetadata#isPaused}), as Kafka
     * Streams' stream threads read it: paused, the engine threads neither process, punctuate nor restore
     * their tasks and stop fetching their inputs, but stay in the group and commit what they processed
     * before. Call after each pause or resume; nothing happens before the engine started or once it closes.
     */
    public void followPause() {
        synchronized (pauseLock) {
            final long running = handle;
            if (running == 0 || closed) {
                return;
            }
            try {
                NativeEngine.setPaused(running, isTopologyPaused());
            } catch (final RuntimeException e) {
                if (!closed) {
                    throw e;
                }
            }
        }
    }

    private boolean isTopologyPaused() {
        return topologyMetadata.isPaused(TopologyMetadata.UNNAMED_TOPOLOGY);
    }

    /** Hears about the restoration of every store; set before {@link #start()}. */
    public synchronized void setRestoreListener(final StateRestoreListener listener) {
        if (handle != 0) {
            throw new IllegalStateException("The restore listener must be set before the engine starts");
        }
        this.restoreListener = listener;
    }

    /** The listener that hears how standby replicas follow their changelogs; set before {@link #start()}. */
    public synchronized void setStandbyUpdateListener(final StandbyUpdateListener listener) {
        if (handle != 0) {
            throw new IllegalStateException("The standby update listener must be set before the engine starts");
        }
        this.standbyListener = listener;
    }

    /**
     * The changelog offsets of the stores of the task directories this client found on disk as it started
     * ({@code StoresOnDisk}), whose sums its threads' group members report for tasks they hold no replica of.
     */
    public void setChangelogOffsetsOnDisk(final Map<TaskId, Map<TopicPartition, Long>> offsets) {
        environment.changelogOffsetsOnDisk(offsets);
    }

    /**
     * Stops the engine: its threads commit, close their tasks and stop. A second call does nothing.
     *
     * @throws org.apache.kafka.streams.errors.StreamsException carrying the first error an engine thread stopped with
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (handle != 0) {
                NativeEngine.close(handle);
            }
        } finally {
            // The threads are gone; a replacing engine registers its threads' metrics anew.
            environment.close();
            partitionLookup.close();
            if (ownStateDirectory != null) {
                ownStateDirectory.close();
            }
            if (ownStreamThreads != null) {
                ownStreamThreads.close();
            }
            if (ownMetrics != null) {
                ownMetrics.close();
            }
        }
    }

    /**
     * True once an engine thread stopped on its own (an upcall failed, or the engine did), until
     * {@link #close()} begins. Not synchronized with {@link #close()}: an engine thread's listener may
     * ask while {@code close()} waits for that thread.
     */
    public boolean hasFailed() {
        final long running = handle;
        if (running == 0 || closed) {
            return false;
        }
        try {
            return NativeEngine.hasFailed(running);
        } catch (final RuntimeException e) {
            if (closed) {
                return false;
            }
            throw e;
        }
    }

    /** Each engine thread's share of {@code statestore.cache.max.bytes} now, as Kafka Streams splits it. */
    public long cacheBytesPerThread() {
        return environment.cacheBytesPerThread();
    }

    /** How many engine threads run (Kafka Streams' alive stream threads). */
    public int aliveThreads() {
        return environment.aliveThreads();
    }

    /**
     * Starts one more engine thread, numbered with the lowest free index; returns its name. Every engine
     * thread's share of the record cache and of the uncommitted-bytes budget shrinks, as in Kafka Streams.
     */
    public String addThread() {
        synchronized (threadChanges) {
            final String name = NativeEngine.addThread(runningHandle());
            environment.threadAdded(name);
            return name;
        }
    }

    /**
     * Stops the oldest engine thread, which commits and closes its tasks and leaves the group; its tasks
     * move to the others, and the shares of the record cache and of the uncommitted-bytes budget grow. Not
     * synchronized: the thread's last upcalls must not wait for this.
     *
     * @return the thread's name, empty when no thread runs
     * @throws org.apache.kafka.common.errors.TimeoutException when it has not stopped within {@code timeout}
     */
    public Optional<String> removeThread(final Duration timeout) {
        synchronized (threadChanges) {
            final long running = runningHandle();
            environment.threadStopping();
            final Optional<String> name;
            try {
                name = Optional.ofNullable(NativeEngine.removeThread(running, timeout.toMillis()));
            } catch (final RuntimeException e) {
                // A thread that did not stop in time goes on stopping, and is reaped once it has ended; any
                // other failure stopped none.
                if (!(e instanceof TimeoutException)) {
                    environment.threadKept();
                }
                throw e;
            }
            name.ifPresentOrElse(environment::threadGone, environment::threadKept);
            return name;
        }
    }

    /**
     * Forgets the engine threads that were removed, outlived their removal's timeout, and have ended
     * since (their numbers are free again); called by the client's supervisor.
     */
    public void reapRetiredThreads() {
        final long running = handle;
        if (running == 0 || closed) {
            return;
        }
        try {
            synchronized (threadChanges) {
                for (String name = NativeEngine.reapRetiredThread(running); name != null;
                     name = NativeEngine.reapRetiredThread(running)) {
                    environment.threadGone(name);
                }
            }
        } catch (final RuntimeException e) {
            if (!closed) {
                throw e;
            }
        }
    }

    /**
     * The name of an engine thread that stopped on its own (it failed), if one did; empty once
     * {@link #close()} begins. Not synchronized, as {@link #hasFailed()}.
     */
    public Optional<String> stoppedThread() {
        final long running = handle;
        if (running == 0 || closed) {
            return Optional.empty();
        }
        try {
            return Optional.ofNullable(NativeEngine.stoppedThread(running));
        } catch (final RuntimeException e) {
            if (closed) {
                return Optional.empty();
            }
            throw e;
        }
    }

    /**
     * Takes the stopped engine thread {@code name} out; {@link #addThread()} replaces it.
     *
     * @throws org.apache.kafka.streams.errors.StreamsException carrying the error it stopped with
     */
    public void takeStoppedThread(final String name) {
        synchronized (threadChanges) {
            try {
                NativeEngine.takeStoppedThread(runningHandle(), name);
            } finally {
                environment.threadStopping();
                environment.threadGone(name);
            }
        }
    }

    private long runningHandle() {
        final long running = handle;
        if (running == 0 || closed) {
            throw new IllegalStateException("The engine is not running");
        }
        return running;
    }

    /** The bytes the running local tasks' stores and the global stores hold uncommitted, summed; read from any thread. */
    public long uncommittedBytes() {
        return environment.uncommittedBytes();
    }

    /**
     * The {@code records-lag} metrics of each engine thread's consumers (Kafka's
     * {@code consumer-fetch-manager-metrics}, tagged with the consumer's client id, topic and partition): how far
     * behind the end of each input partition of its running tasks the thread's main consumer is, and how far
     * behind the end of each changelog partition it restores or follows its restore consumer is. Read from any
     * thread; empty before the engine starts and once it closed.
     */
    public Map<MetricName, Metric> consumerLagMetrics() {
        final long running = handle;
        if (running == 0 || closed) {
            return Map.of();
        }
        final RuntimeFraming.ConsumerLags lags;
        try {
            lags = RuntimeFraming.readConsumerLags(NativeEngine.consumerLags(running));
        } catch (final StreamsException closedMeanwhile) {
            return Map.of();
        }
        final Map<MetricName, Metric> metrics = new LinkedHashMap<>();
        addLagMetrics(metrics, lags.main(), "-consumer");
        addLagMetrics(metrics, lags.restore(), "-restore-consumer");
        return metrics;
    }

    /** Adds a {@code records-lag} metric per thread and partition of {@code lags}, of the consumer {@code role}. */
    private void addLagMetrics(final Map<MetricName, Metric> metrics,
                               final Map<Integer, Map<TopicPartition, Long>> lags, final String role) {
        lags.forEach((thread, partitions) -> {
            // The client id of the thread's consumer, as the engine names it.
            final String clientId = StreamThreads.engineThreadName(config, thread) + role;
            partitions.forEach((partition, lag) -> {
                final MetricName name = new MetricName("records-lag", "consumer-fetch-manager-metrics",
                    "The latest lag of the partition",
                    Map.of("client-id", clientId, "topic", partition.topic(), "partition",
                        String.valueOf(partition.partition())));
                metrics.put(name, new ValueMetric(name, lag.doubleValue()));
            });
        });
    }

    /** A metric's value at the moment it was read. */
    private record ValueMetric(MetricName metricName, Object metricValue) implements Metric {
    }

    /** The name the engine's global thread runs under, which its failures are reported with. */
    public String globalThreadName() {
        return config.getString(StreamsConfig.APPLICATION_ID_CONFIG) + "-GlobalStreamThread";
    }

    /** The store called storeName of each running local task (KS's outermost, metered store), keyed by partition. */
    public Map<Integer, StateStore> localStores(final String storeName) {
        return environment.localStores(storeName);
    }

    /**
     * Asks every client of the application to shut down through the group, as Kafka Streams' threads do; false
     * when no engine thread is in the group to carry the request now (a thread added later carries it).
     */
    public boolean requestApplicationShutdown() {
        return environment.requestApplicationShutdown();
    }

    /**
     * A store of a task of this client as an interactive query finds it: whether the task is active here, and the
     * state of the engine thread that holds it, as Kafka Streams names stream thread states.
     */
    public record QueryableStore(StateStore store, boolean active, String threadState) { }

    /**
     * The store {@code storeName} of each running task and, where no running task has one, of each standby
     * replica this client keeps, keyed by partition.
     */
    public Map<Integer, QueryableStore> queryableStores(final String storeName) {
        return environment.queryableStores(storeName);
    }

    /** The changelog partitions the engine's threads are restoring now, with the offset each reached. */
    public List<RestoreProgress.Position> restoring() {
        final RestoreProgress progress = restoreProgress;
        return progress == null ? List.of() : progress.restoring();
    }

    /**
     * The changelog partitions of the stores of tasks held unopened while processing is paused and of standby
     * replicas that have not begun to follow them, each with where its store is.
     */
    public List<RestoreProgress.Position> idleStorePositions() {
        return environment.idleStorePositions();
    }

    /** The changelog partitions the standby replicas follow, each with the next offset to read. */
    public List<RestoreProgress.Position> followed() {
        final RestoreProgress progress = restoreProgress;
        return progress == null ? List.of() : progress.followed();
    }

    /**
     * Where the engine threads stand in their rebalances, for the instance's REBALANCING and RUNNING
     * states; {@link RuntimeListener#onRebalanceStatusChanged()} tells when it may have changed.
     */
    public RebalanceStatus rebalanceStatus() {
        return environment.rebalanceStatus();
    }

    /**
     * The engine threads' rebalances at one moment.
     *
     * @param rebalancesStarted how many rebalances began on the engine threads so far (a thread's first
     *     assignment is not one): a change means a rebalance happened, however short
     * @param allAssignedTasksRunning every engine thread has its assignment and ran every task of it (Kafka
     *     Streams' stream threads are all RUNNING)
     */
    public record RebalanceStatus(long rebalancesStarted, boolean allAssignedTasksRunning) {
    }

    /**
     * Each engine thread's state (Kafka Streams' stream thread state names), by thread name, once it has
     * reported its first rebalance.
     */
    public Map<String, String> threadStates() {
        return environment.threadStates();
    }

    /** Running local tasks' metadata (inputs, committed and fetched offsets, live), by task. */
    public Map<TaskId, TaskMetadata> localTasks() {
        return environment.localTasks();
    }

    /** The metadata of the standby replicas this client keeps, by the engine thread that keeps them. */
    public Map<String, Set<TaskMetadata>> standbyTasks() {
        return environment.standbyTasks();
    }

    /**
     * Checks the engine's part of {@code config} (the {@code sluice.*} keys, the client settings) the way
     * Kafka Streams checks its config and its clients' when a client is created.
     *
     * @return the client settings the engine's clients take as another value (a number beyond
     *     librdkafka's range is taken as its bound), each with the value they use, for a warning
     * @throws org.apache.kafka.common.config.ConfigException naming the first bad key
     */
    public static Map<String, String> checkConfig(final StreamsConfig config) {
        NativeLibrary.load();
        return RuntimeFraming.readProperties(NativeEngine.checkConfig(RuntimeFraming.properties(engineProperties(config))));
    }

    /**
     * Checks that the engine runs {@code topologyMetadata}, built and rewritten, as a Kafka Streams client
     * would check its topology when it is created.
     *
     * @throws UnsupportedOperationException naming what Sluice's runtime does not run yet
     */
    public static void checkTopology(final TopologyMetadata topologyMetadata) {
        EngineTopology.checkRunnable(topologyMetadata);
    }

    /**
     * The application config as the engine reads it: every original value that has a text form, each
     * unprefixed client setting also under the prefix of every client that has the key (the engine
     * reads client settings by prefix only), and the effective value of the keys whose defaults Kafka
     * Streams derives from others.
     */
    static Map<String, String> engineProperties(final StreamsConfig config) {
        final Map<String, String> properties = new TreeMap<>();
        config.originals().forEach((key, value) -> {
            final String text = text(value);
            if (text != null) {
                properties.put(key, text);
            }
        });
        // As in Kafka Streams, a prefixed setting wins over the unprefixed one; client.id names
        // the application's clients rather than being one client's id, and group.protocol is Kafka
        // Streams' own choice of rebalance protocol, not the consumer's.
        new TreeMap<>(properties).forEach((key, value) -> CLIENT_KEYS_BY_PREFIX.forEach((prefix, keys) -> {
            if (keys.contains(key) && !key.equals(CommonClientConfigs.CLIENT_ID_CONFIG)
                    && !key.equals(StreamsConfig.GROUP_PROTOCOL_CONFIG)) {
                properties.putIfAbsent(prefix + key, value);
            }
        }));
        properties.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG,
            String.valueOf(config.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)));
        properties.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, config.getString(StreamsConfig.PROCESSING_GUARANTEE_CONFIG));
        properties.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG,
            String.valueOf(config.getInt(StreamsConfig.NUM_STREAM_THREADS_CONFIG)));
        return properties;
    }

    private static String text(final Object value) {
        if (value instanceof String || value instanceof Number || value instanceof Boolean) {
            return value.toString();
        }
        if (value instanceof Class) {
            return ((Class<?>) value).getName();
        }
        if (value instanceof Password) {
            return ((Password) value).value();
        }
        if (value instanceof List) {
            final StringBuilder joined = new StringBuilder();
            for (final Object element : (List<?>) value) {
                final String text = text(element);
                if (text == null) {
                    return null;
                }
                joined.append(joined.length() == 0 ? "" : ",").append(text);
            }
            return joined.toString();
        }
        return null;
    }

    /** The application's state directory, locked against other instances as Kafka Streams locks it. */
    private static StateDirectory lockedStateDirectory(final TopologyMetadata topologyMetadata,
                                                       final StreamsConfig config,
                                                       final Time time) {
        final StateDirectory directory = new StateDirectory(
            config, time, topologyMetadata.hasPersistentStores(), topologyMetadata.hasNamedTopologies());
        directory.initializeProcessId();
        return directory;
    }

    private static Metrics newMetrics(final StreamsConfig config, final Time time) {
        final MetricConfig metricConfig = new MetricConfig()
            .samples(config.getInt(StreamsConfig.METRICS_NUM_SAMPLES_CONFIG))
            .recordLevel(Sensor.RecordingLevel.forName(config.getString(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG)))
            .timeWindow(config.getLong(StreamsConfig.METRICS_SAMPLE_WINDOW_MS_CONFIG), TimeUnit.MILLISECONDS);
        return new Metrics(metricConfig, time);
    }
}
