package org.apache.kafka.streams;

import dev.sluice.streams.runtime.ApplicationShutdownRequestedException;
import dev.sluice.streams.runtime.LocalStateStoreProvider;
import dev.sluice.streams.runtime.internals.EngineRuntime;
import dev.sluice.streams.runtime.internals.RuntimeChoice;
import dev.sluice.streams.runtime.internals.RuntimeListener;
import dev.sluice.streams.runtime.internals.StoreChangelogs;
import dev.sluice.streams.runtime.internals.StreamThreads;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.TopologyException;
import org.apache.kafka.streams.errors.ProcessorStateException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.StreamsNotStartedException;
import org.apache.kafka.streams.errors.StreamsStoppedException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.errors.UnknownStateStoreException;
import org.apache.kafka.streams.internals.ApiUtils;
import org.apache.kafka.streams.internals.CloseOptionsInternal;
import org.apache.kafka.streams.internals.metrics.ClientMetrics;
import org.apache.kafka.streams.processor.StandbyUpdateListener;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.StateStore;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.internals.ClientUtils;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.StoresOnDisk;
import org.apache.kafka.streams.processor.internals.StateDirectory;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.ThreadMetadataImpl;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;
import org.apache.kafka.streams.query.FailureReason;
import org.apache.kafka.streams.query.PositionBound;
import org.apache.kafka.streams.query.QueryConfig;
import org.apache.kafka.streams.query.QueryResult;
import org.apache.kafka.streams.query.StateQueryRequest;
import org.apache.kafka.streams.query.StateQueryResult;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.internals.GlobalStateStoreProvider;
import org.slf4j.Logger;

/**
 * Sluice's {@code KafkaStreams}: the public API of Kafka Streams 4.4.0's class of the same name,
 * run by Sluice's Rust engine instead of Kafka Streams' stream threads.
 *
 * <p>The engine owns the Kafka clients, the group membership, commits and restoration; this class
 * keeps Kafka Streams' client-side contract: the {@link State} machine and its
 * {@link StateListener}, the {@link StreamsUncaughtExceptionHandler}, closing, interactive queries
 * over the stores of local tasks, and the metadata of this instance. A method the engine cannot
 * honour throws {@link UnsupportedOperationException} naming the method; none is silently ignored.
 *
 * <p>The engine reports thread failures through {@link RuntimeListener}; a {@link ClientSupervisor}
 * applies the handler's response, watches the engine for threads that stopped without a Java
 * exception, and moves the client between REBALANCING and RUNNING as tasks start.
 */
public class KafkaStreams implements AutoCloseable {

    /**
     * Apache Kafka Streams' own client, to which every call goes where this JVM runs on Apache's runtime
     * ({@link RuntimeChoice}); null on Sluice's.
     */
    private final ApacheKafkaStreams apacheRuntime;
    private final Time time;
    private final Logger log;
    protected final String clientId;
    private final Metrics metrics;
    private final StreamsMetricsImpl streamsMetrics;
    private final LogContext logContext;
    protected final StreamsConfig applicationConfigs;
    /**
     * Kafka Streams' stream thread objects, one per engine thread, as Kafka Streams lists its own threads: they never
     * run (the engine's threads do the work), but their names, states and listeners, and their consumers, which are
     * the threads' group members, are the engine threads'.
     */
    protected final List<StreamThread> threads;
    /** The engine threads' group members and stream thread objects, made before the threads run. */
    private final StreamThreads streamThreads;
    protected final StreamsMetadataState streamsMetadataState;
    protected final Admin adminClient;
    protected final TopologyMetadata topologyMetadata;
    /** The local state directory, shared by every engine this client starts. */
    protected StateDirectory stateDirectory;
    protected volatile State state = State.CREATED;

    private final Object stateLock = new Object();
    private StateListener stateListener;
    /** Set before start; every engine this client starts reports restoration to it. */
    private volatile StateRestoreListener restoreListener;
    private volatile StandbyUpdateListener standbyListener;
    private StreamsUncaughtExceptionHandler uncaughtExceptionHandler = exception -> StreamThreadExceptionResponse.SHUTDOWN_CLIENT;

    /** Guards starting and closing the engine, so an engine never outlives a close. */
    private final Object engineLock = new Object();
    /** Read without the lock: engine threads' callbacks must never wait for a start or close in progress. */
    private volatile EngineRuntime engine;
    private boolean engineClosing;
    private final UUID processId;
    private final Sensor failedStreamThreads;
    private final ClientSupervisor supervisor;
    /** Engine thread each running task was reported from. */
    private final Map<TaskId, String> taskThreads = new ConcurrentHashMap<>();
    /** Deletes the task directories of tasks this instance no longer has, every {@code state.cleanup.delay.ms}. */
    private final ScheduledExecutorService stateDirCleaner;

    /**
     * Kafka Streams' client states and their transitions, exactly as in Kafka Streams 4.4.0:
     * <pre>
     * CREATED -> REBALANCING | PENDING_SHUTDOWN
     * REBALANCING -> RUNNING | PENDING_SHUTDOWN | PENDING_ERROR
     * RUNNING -> REBALANCING | RUNNING | PENDING_SHUTDOWN | PENDING_ERROR
     * PENDING_SHUTDOWN -> NOT_RUNNING
     * PENDING_ERROR -> ERROR
     * </pre>
     */
    public enum State {
        CREATED(1, 3),
        REBALANCING(2, 3, 5),
        RUNNING(1, 2, 3, 5),
        PENDING_SHUTDOWN(4),
        NOT_RUNNING,
        PENDING_ERROR(6),
        ERROR;

        private final Set<Integer> validTransitions = new HashSet<>();

        State(final Integer... validTransitions) {
            this.validTransitions.addAll(List.of(validTransitions));
        }

        public boolean hasNotStarted() {
            return equals(CREATED);
        }

        public boolean isRunningOrRebalancing() {
            return equals(RUNNING) || equals(REBALANCING);
        }

        public boolean isShuttingDown() {
            return equals(PENDING_SHUTDOWN) || equals(PENDING_ERROR);
        }

        public boolean hasCompletedShutdown() {
            return equals(NOT_RUNNING) || equals(ERROR);
        }

        public boolean hasStartedOrFinishedShuttingDown() {
            return isShuttingDown() || hasCompletedShutdown();
        }

        public boolean isValidTransition(final State newState) {
            return validTransitions.contains(newState.ordinal());
        }
    }

    /** Listens to the client's state changes. */
    public interface StateListener {
        void onChange(State newState, State oldState);
    }

    /** @deprecated since 4.2, as in Kafka Streams: use {@link org.apache.kafka.streams.CloseOptions}. */
    @Deprecated(since = "4.2")
    public static class CloseOptions {
        private Duration timeout = Duration.ofMillis(Long.MAX_VALUE);
        private boolean leaveGroup = false;

        public CloseOptions() {
        }

        @Deprecated(since = "4.2")
        public CloseOptions timeout(final Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        @Deprecated(since = "4.2")
        public CloseOptions leaveGroup(final boolean leaveGroup) {
            this.leaveGroup = leaveGroup;
            return this;
        }
    }

    // ---------------------------------------------------------------- constructors

    public KafkaStreams(final Topology topology, final Properties props) {
        this(topology, new StreamsConfig(props));
    }

    public KafkaStreams(final Topology topology, final Properties props, final KafkaClientSupplier clientSupplier) {
        this(topology, new StreamsConfig(props), clientSupplier, Time.SYSTEM);
    }

    public KafkaStreams(final Topology topology, final Properties props, final Time time) {
        this(topology, new StreamsConfig(props), time);
    }

    public KafkaStreams(final Topology topology, final Properties props, final KafkaClientSupplier clientSupplier,
                        final Time time) {
        this(topology, new StreamsConfig(props), clientSupplier, time);
    }

    public KafkaStreams(final Topology topology, final StreamsConfig applicationConfigs) {
        this(topology, applicationConfigs, applicationConfigs.getKafkaClientSupplier());
    }

    public KafkaStreams(final Topology topology, final StreamsConfig applicationConfigs,
                        final KafkaClientSupplier clientSupplier) {
        this(topology, applicationConfigs, clientSupplier, Time.SYSTEM);
    }

    public KafkaStreams(final Topology topology, final StreamsConfig applicationConfigs, final Time time) {
        this(topology, applicationConfigs, applicationConfigs.getKafkaClientSupplier(), time);
    }

    private KafkaStreams(final Topology topology, final StreamsConfig applicationConfigs,
                         final KafkaClientSupplier clientSupplier, final Time time) throws StreamsException {
        this(onApacheRuntime(clientSupplier)
                ? new ApacheKafkaStreams(topology, asProperties(applicationConfigs), clientSupplier, time)
                : null,
            new TopologyMetadata(topology.internalTopologyBuilder, applicationConfigs), applicationConfigs,
            clientSupplier, time);
    }

    protected KafkaStreams(final TopologyMetadata topologyMetadata, final StreamsConfig applicationConfigs,
                           final KafkaClientSupplier clientSupplier) throws StreamsException {
        this(onApacheRuntime(clientSupplier) ? new ApacheKafkaStreams(topologyMetadata, applicationConfigs, clientSupplier) : null,
            topologyMetadata, applicationConfigs, clientSupplier, Time.SYSTEM);
    }

    /**
     * Under Apache's runtime ({@code apacheRuntime} given) this client only passes every call on to it; the
     * protected fields subclasses read are Apache's client's, and the engine's parts are never made.
     */
    private KafkaStreams(final ApacheKafkaStreams apacheRuntime, final TopologyMetadata topologyMetadata,
                         final StreamsConfig applicationConfigs, final KafkaClientSupplier clientSupplier,
                         final Time time) throws StreamsException {
        this.apacheRuntime = apacheRuntime;
        this.time = time;
        if (apacheRuntime != null) {
            this.applicationConfigs = apacheRuntime.applicationConfigs;
            this.topologyMetadata = apacheRuntime.topologyMetadata;
            this.clientId = apacheRuntime.clientId;
            this.threads = apacheRuntime.threads;
            this.adminClient = apacheRuntime.adminClient;
            this.streamsMetadataState = apacheRuntime.streamsMetadataState;
            this.stateDirectory = apacheRuntime.stateDirectory;
            apacheRuntime.setStateListener(followingApacheState(null));
            this.log = null;
            this.logContext = null;
            this.metrics = null;
            this.streamsMetrics = null;
            this.processId = null;
            this.failedStreamThreads = null;
            this.supervisor = null;
            this.stateDirCleaner = null;
            this.streamThreads = null;
            return;
        }
        this.applicationConfigs = applicationConfigs;
        this.topologyMetadata = topologyMetadata;
        this.topologyMetadata.buildAndRewriteTopology();
        EngineRuntime.checkTopology(topologyMetadata);
        final Map<String, String> adjustedClientSettings = EngineRuntime.checkConfig(applicationConfigs);

        final HostInfo applicationServer = HostInfo.buildFromEndpoint(
            applicationConfigs.getString(StreamsConfig.APPLICATION_SERVER_CONFIG));
        final HostInfo thisHost = applicationServer == null ? StreamsMetadataState.UNKNOWN_HOST : applicationServer;

        this.stateDirectory = new StateDirectory(applicationConfigs, time, topologyMetadata.hasPersistentStores(),
            topologyMetadata.hasNamedTopologies());
        try {
            processId = stateDirectory.initializeProcessId();
        } catch (final ProcessorStateException e) {
            Utils.closeQuietly(stateDirectory, "streams state directory");
            throw new StreamsException(e);
        }
        final String applicationId = applicationConfigs.getString(StreamsConfig.APPLICATION_ID_CONFIG);
        final String userClientId = applicationConfigs.getString(StreamsConfig.CLIENT_ID_CONFIG);
        this.clientId = userClientId.isEmpty() ? applicationId + "-" + processId : userClientId;
        this.logContext = new LogContext(String.format("stream-client [%s] ", clientId));
        this.log = logContext.logger(getClass());
        topologyMetadata.setLog(logContext);
        log.info("Kafka Streams version: {}", ClientMetrics.version());
        log.info("Kafka Streams commit ID: {}", ClientMetrics.commitId());

        adjustedClientSettings.forEach((key, used) -> log.warn("{} is beyond the range Sluice's engine clients"
            + " (librdkafka) accept; they use {}", key, used));

        this.adminClient = clientSupplier.getAdmin(applicationConfigs.getAdminConfigs(ClientUtils.adminClientId(clientId)));
        this.metrics = createMetrics(applicationConfigs, time, clientId);
        this.streamsMetrics = new StreamsMetricsImpl(metrics, clientId, time);
        ClientMetrics.addVersionMetric(streamsMetrics);
        ClientMetrics.addCommitIdMetric(streamsMetrics);
        ClientMetrics.addApplicationIdMetric(streamsMetrics, applicationId);
        ClientMetrics.addTopologyDescriptionMetric(streamsMetrics,
            (config, now) -> this.topologyMetadata.topologyDescriptionString());
        ClientMetrics.addStateMetric(streamsMetrics, (config, now) -> state.name());
        ClientMetrics.addClientStateTelemetryMetric(processId.toString(), applicationId, streamsMetrics,
            (config, now) -> state.ordinal());
        ClientMetrics.addClientRecordingLevelMetric(processId.toString(), streamsMetrics,
            Sensor.RecordingLevel.forName(applicationConfigs.getString(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG)).id);
        failedStreamThreads = ClientMetrics.failedStreamThreadSensor(streamsMetrics);
        supervisor = new ClientSupervisor(new SupervisedClient(), log);
        stateDirCleaner = Executors.newSingleThreadScheduledExecutor(task -> {
            final Thread cleaner = new Thread(task, clientId + "-CleanupThread");
            cleaner.setDaemon(true);
            return cleaner;
        });
        ClientMetrics.addNumAliveStreamThreadMetric(streamsMetrics, (config, now) -> aliveStreamThreads());
        // Sluice's own: Kafka Streams has the gauge per key-value store only (stream-state-metrics); the
        // instance's total is what statestore.uncommitted.max.bytes bounds.
        streamsMetrics.addClientLevelMutableMetric("uncommitted-bytes",
            "The approximate number of uncommitted bytes in the transactional state stores of this instance",
            Sensor.RecordingLevel.INFO, (Gauge<Long>) (config, now) -> {
                final EngineRuntime current = currentEngine();
                return current == null ? 0L : current.uncommittedBytes();
            });

        this.streamsMetadataState = new StreamsMetadataState(topologyMetadata, thisHost, logContext);
        // As Kafka Streams makes its stream threads, with their consumers, when the client is made.
        this.streamThreads = new StreamThreads(applicationConfigs, topologyMetadata, processId, clientId,
            streamsMetadataState, time);
        try {
            for (int index = 1; index <= topologyMetadata.numStreamThreads(applicationConfigs); index++) {
                streamThreads.make(index);
            }
        } catch (final RuntimeException e) {
            // A client that cannot be made holds nothing: its state directory may be locked again by the next.
            streamThreads.close();
            stateDirCleaner.shutdownNow();
            adminClient.close(Duration.ZERO);
            metrics.close();
            stateDirectory.close();
            throw e;
        }
        this.threads = streamThreads.list();
    }

    /**
     * Whether this client runs on Apache Kafka Streams' runtime: the JVM does ({@link RuntimeChoice}), or the
     * application supplies its own Kafka clients, which only that runtime can use (the engine's are librdkafka's).
     * A supplier's clients are never bypassed: with one, the client runs on Apache's runtime over the topology's
     * stores, Sluice's included.
     */
    /**
     * Apache's client keeps its state in a field of its own, but a subclass of this client (Kafka Streams'
     * named-topology wrapper is one) reads this client's protected {@code state}: it follows Apache's through
     * the one state listener Apache's client takes, ahead of the application's listener.
     */
    private StateListener followingApacheState(final StateListener applicationListener) {
        return (newState, oldState) -> {
            state = newState;
            if (applicationListener != null) {
                applicationListener.onChange(newState, oldState);
            }
        };
    }

    private static boolean onApacheRuntime(final KafkaClientSupplier clientSupplier) {
        if (RuntimeChoice.apacheRuntime()) {
            return true;
        }
        if (clientSupplier.getClass() == DefaultKafkaClientSupplier.class) {
            return false;
        }
        org.slf4j.LoggerFactory.getLogger(KafkaStreams.class).warn("A KafkaClientSupplier ({}) was given: Sluice's engine "
            + "cannot run on the clients it supplies, so this client runs on Apache Kafka Streams' own runtime, which "
            + "uses them, over the topology's stores", clientSupplier.getClass().getName());
        return true;
    }

    private static Properties asProperties(final StreamsConfig applicationConfigs) {
        final Properties properties = new Properties();
        properties.putAll(applicationConfigs.originals());
        return properties;
    }

    private static Metrics createMetrics(final StreamsConfig config, final Time time, final String clientId) {
        final MetricConfig metricConfig = new MetricConfig()
            .samples(config.getInt(StreamsConfig.METRICS_NUM_SAMPLES_CONFIG))
            .recordLevel(Sensor.RecordingLevel.forName(config.getString(StreamsConfig.METRICS_RECORDING_LEVEL_CONFIG)))
            .timeWindow(config.getLong(StreamsConfig.METRICS_SAMPLE_WINDOW_MS_CONFIG), TimeUnit.MILLISECONDS);
        final List<MetricsReporter> reporters = CommonClientConfigs.metricsReporters(clientId, config);
        final KafkaMetricsContext context = new KafkaMetricsContext("kafka.streams",
            config.originalsWithPrefix(CommonClientConfigs.METRICS_CONTEXT_PREFIX));
        return new Metrics(metricConfig, reporters, time, context);
    }

    // ---------------------------------------------------------------- state

    private boolean waitOnStates(final long waitMs, final State... targetStates) {
        final Set<State> targets = Set.of(targetStates);
        final long begin = time.milliseconds();
        synchronized (stateLock) {
            boolean interrupted = false;
            long elapsedMs = 0L;
            try {
                while (!targets.contains(state)) {
                    if (waitMs > elapsedMs) {
                        final long remainingMs = waitMs - elapsedMs;
                        try {
                            stateLock.wait(remainingMs);
                        } catch (final InterruptedException e) {
                            interrupted = true;
                        }
                    } else {
                        log.debug("Cannot transit to {} within {}ms", targets, waitMs);
                        return false;
                    }
                    elapsedMs = time.milliseconds() - begin;
                }
                return true;
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Moves to {@code newState} if Kafka Streams would; returns false for the transitions Kafka
     * Streams ignores (for example anything but NOT_RUNNING once PENDING_SHUTDOWN).
     */
    private boolean setState(final State newState) {
        final State oldState;
        synchronized (stateLock) {
            oldState = state;
            if (state == State.PENDING_SHUTDOWN && newState != State.NOT_RUNNING) {
                return false;
            } else if (state == State.NOT_RUNNING && (newState == State.PENDING_SHUTDOWN || newState == State.NOT_RUNNING)) {
                return false;
            } else if (state == State.REBALANCING && newState == State.REBALANCING) {
                return false;
            } else if (state == State.ERROR && (newState == State.PENDING_ERROR || newState == State.ERROR
                || newState == State.PENDING_SHUTDOWN)) {
                return false;
            } else if (state == State.PENDING_ERROR && newState != State.ERROR) {
                return false;
            } else if (!state.isValidTransition(newState)) {
                throw new IllegalStateException("Stream-client " + clientId + ": Unexpected state transition from "
                    + oldState + " to " + newState);
            }
            log.info("State transition from {} to {}", oldState, newState);
            state = newState;
            stateLock.notifyAll();
        }
        final StateListener listener = stateListener;
        if (listener != null) {
            listener.onChange(newState, oldState);
        }
        return true;
    }

    public State state() {
        if (apacheRuntime != null) {
            return apacheRuntime.state();
        }
        return state;
    }

    protected boolean isRunningOrRebalancing() {
        if (apacheRuntime != null) {
            return apacheRuntime.isRunningOrRebalancing();
        }
        synchronized (stateLock) {
            return state.isRunningOrRebalancing();
        }
    }

    /**
     * Kafka Streams counts the stream threads it made that are not shutting down: it makes them as it is
     * constructed, so before start they are all the configured ones.
     */
    private int aliveStreamThreads() {
        final EngineRuntime current = engine;
        if (state == State.CREATED) {
            return applicationConfigs.getInt(StreamsConfig.NUM_STREAM_THREADS_CONFIG);
        }
        return isRunningOrRebalancing() && current != null ? current.aliveThreads() : 0;
    }

    protected boolean hasStartedOrFinishedShuttingDown() {
        if (apacheRuntime != null) {
            return apacheRuntime.hasStartedOrFinishedShuttingDown();
        }
        synchronized (stateLock) {
            return state.hasStartedOrFinishedShuttingDown();
        }
    }

    protected void validateIsRunningOrRebalancing() {
        if (apacheRuntime != null) {
            apacheRuntime.validateIsRunningOrRebalancing();
            return;
        }
        synchronized (stateLock) {
            if (state.hasNotStarted()) {
                throw new StreamsNotStartedException("KafkaStreams has not been started, you can retry after calling start()");
            }
            if (!state.isRunningOrRebalancing()) {
                throw new IllegalStateException("KafkaStreams is not running. State is " + state + ".");
            }
        }
    }

    public void setStateListener(final StateListener listener) {
        if (apacheRuntime != null) {
            apacheRuntime.setStateListener(followingApacheState(listener));
            // Kept here as well, where Kafka Streams keeps it: tools that chain listeners read this field.
            stateListener = listener;
            return;
        }
        synchronized (stateLock) {
            if (state.hasNotStarted()) {
                stateListener = listener;
            } else {
                throw new IllegalStateException("Can only set StateListener before calling start(). Current state is: " + state);
            }
        }
    }

    public void setUncaughtExceptionHandler(final StreamsUncaughtExceptionHandler userStreamsUncaughtExceptionHandler) {
        if (apacheRuntime != null) {
            apacheRuntime.setUncaughtExceptionHandler(userStreamsUncaughtExceptionHandler);
            return;
        }
        synchronized (stateLock) {
            if (state.hasNotStarted()) {
                uncaughtExceptionHandler = Objects.requireNonNull(userStreamsUncaughtExceptionHandler);
            } else {
                throw new IllegalStateException(
                    "Can only set UncaughtExceptionHandler before calling start(). Current state is: " + state);
            }
        }
    }

    /** The listener hears about the restoration of every store, task and global stores alike. */
    public void setGlobalStateRestoreListener(final StateRestoreListener globalStateRestoreListener) {
        if (apacheRuntime != null) {
            apacheRuntime.setGlobalStateRestoreListener(globalStateRestoreListener);
            return;
        }
        synchronized (stateLock) {
            if (!state.hasNotStarted()) {
                throw new IllegalStateException(
                    "Can only set GlobalStateRestoreListener before calling start(). Current state is: " + state);
            }
            restoreListener = globalStateRestoreListener;
        }
    }

    /** The listener hears how the standby replicas of this client's tasks follow their changelogs. */
    public void setStandbyUpdateListener(final StandbyUpdateListener standbyListener) {
        if (apacheRuntime != null) {
            apacheRuntime.setStandbyUpdateListener(standbyListener);
            return;
        }
        synchronized (stateLock) {
            if (!state.hasNotStarted()) {
                throw new IllegalStateException(
                    "Can only set StandbyUpdateListener before calling start(). Current state is: " + state);
            }
            this.standbyListener = standbyListener;
        }
    }

    /**
     * The client's metrics (client, thread, task, processor and store levels), the admin client's, and the
     * {@code records-lag} of the engine threads' consumers.
     */
    public Map<MetricName, ? extends Metric> metrics() {
        if (apacheRuntime != null) {
            return apacheRuntime.metrics();
        }
        final Map<MetricName, Metric> result = new LinkedHashMap<>(metrics.metrics());
        result.putAll(ClientUtils.adminClientMetrics(adminClient));
        final EngineRuntime current = currentEngine();
        if (current != null) {
            result.putAll(current.consumerLagMetrics());
        }
        return Collections.unmodifiableMap(result);
    }

    // ---------------------------------------------------------------- threads

    /**
     * Starts one more engine thread, which joins the group and takes tasks in the rebalance that follows.
     * The record cache and the uncommitted-bytes budget are split anew between the live threads.
     *
     * @return its name, or empty when the client is not running or rebalancing
     */
    public Optional<String> addStreamThread() {
        if (apacheRuntime != null) {
            return apacheRuntime.addStreamThread();
        }
        final EngineRuntime current = engine;
        if (!isRunningOrRebalancing() || current == null) {
            log.warn("Cannot add a stream thread when Kafka Streams client is in state {}", state);
            return Optional.empty();
        }
        try {
            final String name = addThread(current);
            supervisor.wakeUp();
            return Optional.of(name);
        } catch (final IllegalStateException closedMeanwhile) {
            log.warn("Cannot add a stream thread: the client is shutting down");
            return Optional.empty();
        }
    }

    /**
     * Stops the oldest engine thread, which commits and closes its tasks and leaves the group, waiting as
     * long as that takes. The record cache and the uncommitted-bytes budget are split anew between the
     * live threads.
     *
     * @return its name, or empty when no thread runs or the client is not running or rebalancing
     */
    public Optional<String> removeStreamThread() {
        if (apacheRuntime != null) {
            return apacheRuntime.removeStreamThread();
        }
        return removeStreamThread(Long.MAX_VALUE);
    }

    /**
     * Stops the oldest engine thread, which commits and closes its tasks and leaves the group.
     *
     * @return its name, or empty when no thread runs or the client is not running or rebalancing
     * @throws org.apache.kafka.common.errors.TimeoutException when it has not stopped within {@code timeout}
     */
    public Optional<String> removeStreamThread(final Duration timeout) {
        if (apacheRuntime != null) {
            return apacheRuntime.removeStreamThread(timeout);
        }
        ApiUtils.validateMillisecondDuration(timeout, ApiUtils.prepareMillisCheckFailMsgPrefix(timeout, "timeout"));
        return removeStreamThread(timeout.toMillis());
    }

    private Optional<String> removeStreamThread(final long timeoutMs) {
        final EngineRuntime current = engine;
        if (!isRunningOrRebalancing() || current == null) {
            log.warn("Cannot remove a stream thread when Kafka Streams client is in state {}", state);
            return Optional.empty();
        }
        try {
            final Optional<String> removed;
            try {
                removed = current.removeThread(Duration.ofMillis(timeoutMs));
            } catch (final TimeoutException stillStopping) {
                logCacheResize(current);
                throw stillStopping;
            }
            removed.ifPresentOrElse(name -> {
                log.info("Removed stream thread {}", name);
                logCacheResize(current);
            }, () -> log.warn("There are no threads eligible for removal"));
            supervisor.wakeUp();
            return removed;
        } catch (final IllegalStateException closedMeanwhile) {
            log.warn("Cannot remove a stream thread: the client is shutting down");
            return Optional.empty();
        }
    }

    // ---------------------------------------------------------------- start and close

    public synchronized void start() throws IllegalStateException, StreamsException {
        if (apacheRuntime != null) {
            apacheRuntime.start();
            return;
        }
        if (!setState(State.REBALANCING)) {
            throw new IllegalStateException("The client is either already started or already stopped, cannot re-start");
        }
        log.debug("Starting Streams client");
        try {
            final long maxDirectoryAge = applicationConfigs.getLong(StreamsConfig.STATE_CLEANUP_DIR_MAX_AGE_MS_CONFIG);
            if (maxDirectoryAge != StreamsConfig.STATE_CLEANUP_DIR_MAX_AGE_MS_DISABLED) {
                log.debug("Start cleaning outdated directories");
                stateDirectory.cleanOutdatedDirsOnStartup(maxDirectoryAge);
            }
            final Map<TaskId, Map<TopicPartition, Long>> changelogOffsetsOnDisk = StoresOnDisk.openAndClose(
                topologyMetadata, stateDirectory, applicationConfigs, streamsMetrics, time, logContext);
            synchronized (engineLock) {
                engine = startedEngine(changelogOffsetsOnDisk);
            }
            // A pause or resume while the engine started found no engine to tell.
            engineFollowsPause();
        } catch (final MissingSourceTopicException | TopologyException e) {
            // Kafka Streams' threads meet missing source topics, and partition counts that do not fit the
            // topology, at their first rebalance, after start() returned: the uncaught exception handler
            // decides what becomes of the client.
            supervisor.engineFailedToStart(e);
            return;
        } catch (final RuntimeException e) {
            log.error("The client could not start", e);
            closeToError();
            throw e;
        }
        supervisor.start(clientId + "-SluiceSupervisor");
        // A task directory is deleted only while no engine thread holds its lock, and once unmodified that
        // long, as in Kafka Streams.
        final long cleanupDelay = applicationConfigs.getLong(StreamsConfig.STATE_CLEANUP_DELAY_MS_CONFIG);
        stateDirCleaner.scheduleAtFixedRate(() -> {
            if (state == State.RUNNING) {
                stateDirectory.cleanRemovedTasks(cleanupDelay);
            }
        }, cleanupDelay, cleanupDelay, TimeUnit.MILLISECONDS);
    }

    /**
     * The client's engine, started; its threads' failures go to the {@link #supervisor}. {@code changelogOffsetsOnDisk}:
     * the changelog offsets of the stores of the task directories found on disk.
     */
    private EngineRuntime startedEngine(final Map<TaskId, Map<TopicPartition, Long>> changelogOffsetsOnDisk) {
        final EngineRuntime fresh = new EngineRuntime(topologyMetadata, applicationConfigs, time, new EngineListener(),
            streamsMetrics, stateDirectory, processId, streamThreads);
        fresh.setRestoreListener(restoreListener);
        fresh.setStandbyUpdateListener(standbyListener);
        fresh.setChangelogOffsetsOnDisk(changelogOffsetsOnDisk);
        fresh.start();
        return fresh;
    }

    /** The engine's callbacks, called on its threads. */
    private final class EngineListener implements RuntimeListener {

        @Override
        public void onThreadFailure(final String threadName, final Throwable error) {
            log.error("Engine thread {} failed", threadName, error);
            if (supervisor.threadFailed(threadName, error) && !(error instanceof ApplicationShutdownRequestedException)) {
                failedStreamThreads.record();
            }
        }

        @Override
        public void onTaskRunning(final TaskId task) {
            taskThreads.put(task, Thread.currentThread().getName());
        }

        @Override
        public void onRebalanceStatusChanged() {
            supervisor.wakeUp();
        }
    }

    private EngineRuntime currentEngine() {
        return engine;
    }

    /** What the {@link #supervisor} may do to this client. */
    private final class SupervisedClient implements ClientSupervisor.Client {
        @Override
        public State state() {
            return state;
        }

        @Override
        public void transitionTo(final State newState) {
            setState(newState);
        }

        @Override
        public EngineRuntime engine() {
            return currentEngine();
        }

        @Override
        public void closeToError() {
            KafkaStreams.this.closeToError();
        }

        @Override
        public StreamThreadExceptionResponse handle(final Throwable failure) {
            return uncaughtExceptionHandler.handle(failure);
        }

        @Override
        public void requestApplicationShutdown() {
            final EngineRuntime current = currentEngine();
            if (current == null) {
                throw new StreamsException("The engine has stopped: no thread is left to ask the group");
            }
            if (!current.requestApplicationShutdown()) {
                // As Kafka Streams adds a stream thread to tell the group when none is left.
                log.warn("Attempt to shut down the application requires adding a thread to communicate the shutdown. "
                    + "No processing will be done on this thread");
                addThread(current);
            }
        }

        @Override
        public void retainTasks(final Set<TaskId> local) {
            taskThreads.keySet().retainAll(local);
        }

        @Override
        public String addThread(final EngineRuntime current) {
            return KafkaStreams.this.addThread(current);
        }
    }

    private void logCacheResize(final EngineRuntime current) {
        log.info("Resizing thread cache due to thread removal, new cache size per thread is {}",
            current.cacheBytesPerThread());
    }

    /** Starts one more engine thread in {@code current} and says, as Kafka Streams does, how the cache is split now. */
    private String addThread(final EngineRuntime current) {
        final String name = current.addThread();
        log.info("Adding {}, there will now be {} live threads and the new cache size per thread is {}",
            name.substring(name.lastIndexOf("StreamThread-")), current.aliveThreads(), current.cacheBytesPerThread());
        return name;
    }

    /**
     * Closes the client with no timeout, waiting until it is NOT_RUNNING; the engine's consumers
     * leave the group unless they are static members.
     */
    public void close() {
        if (apacheRuntime != null) {
            apacheRuntime.close();
            return;
        }
        close(Optional.empty(), org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.DEFAULT);
    }

    private Thread shutdownHelper(final boolean error) {
        return shutdownHelper(error, Optional.empty());
    }

    /**
     * The thread that closes the client, to ERROR when {@code error}; once the engine closed, the static
     * members of {@code leavingInstance} (its {@code group.instance.id}) are removed from the group.
     */
    private Thread shutdownHelper(final boolean error, final Optional<String> leavingInstance) {
        stateDirCleaner.shutdownNow();
        return new Thread(() -> {
            streamThreads.shuttingDown();
            final EngineRuntime toClose;
            synchronized (engineLock) {
                engineClosing = true;
                toClose = engine;
            }
            if (toClose != null) {
                try {
                    toClose.close();
                } catch (final RuntimeException e) {
                    if (!error) {
                        log.error("The engine stopped with an error", e);
                    }
                }
                leavingInstance.ifPresent(this::removeStaticMembers);
            }
            streamThreads.close();
            stateDirectory.close();
            // What the client asked of the admin client is answered by now: nothing pending may hold the close up.
            adminClient.close(Duration.ZERO);
            streamsMetrics.removeAllClientLevelSensorsAndMetrics();
            metrics.close();
            setState(error ? State.ERROR : State.NOT_RUNNING);
        }, clientId + "-CloseThread");
    }

    boolean close(final Optional<Long> timeout, final org.apache.kafka.streams.CloseOptions.GroupMembershipOperation operation) {
        final Optional<String> leavingInstance = staticMembersLeaving(operation);
        final long timeoutMs = timeout.orElse(Long.MAX_VALUE);
        log.debug("Stopping Streams client with timeout = {}ms.", timeoutMs);
        if (!setState(State.PENDING_SHUTDOWN)) {
            final State current = state;
            if (current.isShuttingDown()) {
                log.info("Skipping shutdown since Streams client is already in {}, waiting for a terminal state", current);
                if (!waitOnStates(timeoutMs, State.ERROR, State.NOT_RUNNING)) {
                    log.warn("Streams client did transition to a terminal state (ERROR or NOT_RUNNING) within the {}ms timeout",
                        timeoutMs);
                    return false;
                }
                log.info("Streams client stopped completely and transitioned to the terminal {} state", state);
                return true;
            }
            if (current.hasCompletedShutdown()) {
                log.info("Skipping shutdown since Streams client is already in the terminal {} state", current);
                return true;
            }
            throw new IllegalStateException("If transitioning to PENDING_SHUTDOWN fails, the state should be either in "
                + "PENDING_SHUTDOWN, PENDING_ERROR, ERROR, or NOT_RUNNING");
        }
        final Thread shutdownThread = shutdownHelper(false, leavingInstance);
        shutdownThread.setDaemon(true);
        shutdownThread.start();
        if (waitOnStates(timeoutMs, State.NOT_RUNNING)) {
            log.info("Streams client stopped completely");
            return true;
        }
        log.info("Streams client cannot stop completely within the {}ms timeout", timeoutMs);
        return false;
    }

    /**
     * The static members that must leave the group once the engine closed: those of this instance's
     * {@code group.instance.id} when {@code operation} asks them to leave. The engine's consumers close as
     * consumers do by default: a dynamic member leaves the group, a static one stays; a dynamic member
     * asked to stay is refused before anything closes.
     */
    private Optional<String> staticMembersLeaving(
        final org.apache.kafka.streams.CloseOptions.GroupMembershipOperation operation) {
        // Kafka Streams names thread n's member <group.instance.id>-n, so thread 0's ends in "-0".
        final Optional<String> instanceId = Optional.ofNullable((String) applicationConfigs.getMainConsumerConfigs(
                applicationConfigs.getString(StreamsConfig.APPLICATION_ID_CONFIG), clientId, 0)
                .get(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG))
            .map(threadZero -> threadZero.substring(0, threadZero.length() - "-0".length()));
        switch (operation) {
            case LEAVE_GROUP:
                return instanceId;
            case REMAIN_IN_GROUP:
                if (instanceId.isEmpty()) {
                    throw new UnsupportedOperationException("KafkaStreams.close(CloseOptions) with "
                        + "GroupMembershipOperation.REMAIN_IN_GROUP: Sluice's engine closes its consumers as consumers "
                        + "do by default, so a dynamic member leaves the group");
                }
                return Optional.empty();
            default:
                return Optional.empty();
        }
    }

    /**
     * Removes this instance's static members from the group, as Kafka Streams' consumers leave it when
     * closed with LEAVE_GROUP: librdkafka's static members never send a leave request, so the admin
     * client removes each engine thread's member ({@code <group.instance.id>-<thread index>}).
     */
    private void removeStaticMembers(final String instanceId) {
        final String groupId = applicationConfigs.getString(StreamsConfig.APPLICATION_ID_CONFIG);
        final java.util.regex.Pattern threadMember = java.util.regex.Pattern.compile(
            java.util.regex.Pattern.quote(instanceId) + "-\\d+");
        final long timeoutMs = applicationConfigs.getInt(StreamsConfig.REQUEST_TIMEOUT_MS_CONFIG);
        try {
            final List<org.apache.kafka.clients.admin.MemberToRemove> members = adminClient
                .describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId)
                .get(timeoutMs, TimeUnit.MILLISECONDS).members().stream()
                .map(member -> member.groupInstanceId().orElse(""))
                .filter(id -> threadMember.matcher(id).matches())
                .map(org.apache.kafka.clients.admin.MemberToRemove::new)
                .toList();
            if (!members.isEmpty()) {
                adminClient.removeMembersFromConsumerGroup(groupId,
                        new org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions(members))
                    .all().get(timeoutMs, TimeUnit.MILLISECONDS);
            }
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            log.warn("Interrupted while removing the static members of {} from the group", instanceId);
        } catch (final java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            log.warn("Could not remove the static members of {} from the group", instanceId, e);
        }
    }

    void closeToError() {
        if (!setState(State.PENDING_ERROR)) {
            log.info("Skipping shutdown since we are already in {}", state());
        } else {
            final Thread shutdownThread = shutdownHelper(true);
            shutdownThread.setDaemon(true);
            shutdownThread.start();
        }
    }

    public synchronized boolean close(final Duration timeout) throws IllegalArgumentException {
        if (apacheRuntime != null) {
            return apacheRuntime.close(timeout);
        }
        final long timeoutMs = validatedTimeoutMs(timeout);
        return close(Optional.of(timeoutMs), org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.DEFAULT);
    }

    /** @deprecated since 4.2, as in Kafka Streams: use {@link #close(org.apache.kafka.streams.CloseOptions)}. */
    @Deprecated(since = "4.2")
    public synchronized boolean close(final CloseOptions options) throws IllegalArgumentException {
        Objects.requireNonNull(options, "options cannot be null");
        return close(org.apache.kafka.streams.CloseOptions.timeout(options.timeout)
            .withGroupMembershipOperation(options.leaveGroup
                ? org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.LEAVE_GROUP
                : org.apache.kafka.streams.CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
    }

    public synchronized boolean close(final org.apache.kafka.streams.CloseOptions options) throws IllegalArgumentException {
        if (apacheRuntime != null) {
            return apacheRuntime.close(options);
        }
        Objects.requireNonNull(options, "options cannot be null");
        final CloseOptionsInternal internal = new CloseOptionsInternal(options);
        final long timeoutMs = validatedTimeoutMs(internal.timeout().orElseGet(() -> Duration.ofMillis(Long.MAX_VALUE)));
        return close(Optional.of(timeoutMs), internal.operation());
    }

    private static long validatedTimeoutMs(final Duration timeout) {
        final long timeoutMs = ApiUtils.validateMillisecondDuration(timeout,
            ApiUtils.prepareMillisCheckFailMsgPrefix(timeout, "timeout"));
        if (timeoutMs < 0) {
            throw new IllegalArgumentException("Timeout can't be negative.");
        }
        return timeoutMs;
    }

    /** Deletes the local state of this application, allowed only before start or after close. */
    public void cleanUp() {
        if (apacheRuntime != null) {
            apacheRuntime.cleanUp();
            return;
        }
        if (!(state.hasNotStarted() || state.hasCompletedShutdown())) {
            throw new IllegalStateException("Cannot clean up while running.");
        }
        stateDirectory.clean();
    }

    // ---------------------------------------------------------------- metadata

    public Collection<StreamsMetadata> metadataForAllStreamsClients() {
        if (apacheRuntime != null) {
            return apacheRuntime.metadataForAllStreamsClients();
        }
        validateIsRunningOrRebalancing();
        return streamsMetadataState.allMetadata();
    }

    public Collection<StreamsMetadata> streamsMetadataForStore(final String storeName) {
        if (apacheRuntime != null) {
            return apacheRuntime.streamsMetadataForStore(storeName);
        }
        validateIsRunningOrRebalancing();
        return streamsMetadataState.allMetadataForStore(storeName);
    }

    public <K> KeyQueryMetadata queryMetadataForKey(final String storeName, final K key,
                                                    final Serializer<K> keySerializer) {
        if (apacheRuntime != null) {
            return apacheRuntime.queryMetadataForKey(storeName, key, keySerializer);
        }
        return queryMetadataForKey(storeName, key, new RecordHeaders(), keySerializer);
    }

    public <K> KeyQueryMetadata queryMetadataForKey(final String storeName, final K key, final Headers headers,
                                                    final Serializer<K> keySerializer) {
        if (apacheRuntime != null) {
            return apacheRuntime.queryMetadataForKey(storeName, key, headers, keySerializer);
        }
        validateIsRunningOrRebalancing();
        return streamsMetadataState.keyQueryMetadataForKey(storeName, key, headers, keySerializer);
    }

    public <K> KeyQueryMetadata queryMetadataForKey(final String storeName, final K key,
                                                    final StreamPartitioner<? super K, ?> partitioner) {
        if (apacheRuntime != null) {
            return apacheRuntime.queryMetadataForKey(storeName, key, partitioner);
        }
        return queryMetadataForKey(storeName, key, new RecordHeaders(), partitioner);
    }

    public <K> KeyQueryMetadata queryMetadataForKey(final String storeName, final K key, final Headers headers,
                                                    final StreamPartitioner<? super K, ?> partitioner) {
        if (apacheRuntime != null) {
            return apacheRuntime.queryMetadataForKey(storeName, key, headers, partitioner);
        }
        validateIsRunningOrRebalancing();
        return streamsMetadataState.keyQueryMetadataForKey(storeName, key, headers, partitioner);
    }

    // ---------------------------------------------------------------- interactive queries

    public <T> T store(final StoreQueryParameters<T> storeQueryParameters) {
        if (apacheRuntime != null) {
            return apacheRuntime.store(storeQueryParameters);
        }
        validateIsRunningOrRebalancing();
        final String storeName = storeQueryParameters.storeName();
        if (!topologyMetadata.hasStore(storeName)) {
            throw new UnknownStateStoreException("Cannot get state store " + storeName
                + " because no such store is registered in the topology.");
        }
        // As in Kafka Streams, a global store is queried whatever the stream threads' state.
        if (topologyMetadata.globalStateStores().containsKey(storeName)) {
            return storeQueryParameters.queryableStoreType().create(
                new GlobalStateStoreProvider(topologyMetadata.globalStateStores()), storeName);
        }
        if (!storeQueryParameters.staleStoresEnabled() && state != State.RUNNING) {
            throw new InvalidStateStoreException("Cannot get state store " + storeName
                + " because the stream thread is " + state + ", not RUNNING");
        }
        final boolean withStandbys = storeQueryParameters.staleStoresEnabled();
        return storeQueryParameters.queryableStoreType().create(
            new LocalStateStoreProvider(name -> localStores(name, withStandbys), storeQueryParameters,
                applicationConfigs.defaultInteractiveQueryIsolationLevel()),
            storeName);
    }

    /**
     * The stores called {@code storeName} of the running tasks and, {@code withStandbys}, of the standby replicas
     * too, by partition.
     */
    private Map<Integer, StateStore> localStores(final String storeName, final boolean withStandbys) {
        final EngineRuntime current = currentEngine();
        if (current == null || !isRunningOrRebalancing()) {
            throw new InvalidStateStoreException("KafkaStreams has been stopped (" + state + ").");
        }
        final Map<Integer, StateStore> stores = new HashMap<>();
        current.queryableStores(storeName).forEach((partition, local) -> {
            if (local.active() || withStandbys) {
                stores.put(partition, local.store());
            }
        });
        return stores;
    }

    public <R> StateQueryResult<R> query(final StateQueryRequest<R> request) {
        if (apacheRuntime != null) {
            return apacheRuntime.query(request);
        }
        final String storeName = request.getStoreName();
        if (!topologyMetadata.hasStore(storeName)) {
            throw new UnknownStateStoreException("Cannot get state store " + storeName
                + " because no such store is registered in the topology.");
        }
        if (state().hasNotStarted()) {
            throw new StreamsNotStartedException("KafkaStreams has not been started, you can retry after calling start().");
        }
        if (state().isShuttingDown() || state.hasCompletedShutdown()) {
            throw new StreamsStoppedException("KafkaStreams has been stopped (" + state
                + "). This instance can no longer serve queries.");
        }
        final StateQueryResult<R> result = new StateQueryResult<>();
        if (topologyMetadata.globalStateStores().containsKey(storeName)) {
            // As Kafka Streams answers: interactive queries v2 do not reach global stores.
            result.setGlobalResult(QueryResult.forFailure(FailureReason.UNKNOWN_QUERY_TYPE,
                "Global stores do not yet support the KafkaStreams#query API. Use KafkaStreams#store instead."));
            return result;
        }
        // An engine still starting has no tasks yet: every partition asked for is not present.
        final EngineRuntime current = currentEngine();
        final Map<Integer, EngineRuntime.QueryableStore> stores =
            current == null ? Map.of() : new TreeMap<>(current.queryableStores(storeName));
        final QueryConfig queryConfig = new QueryConfig(request.executionInfoEnabled(),
            request.isolationLevel().orElseGet(applicationConfigs::defaultInteractiveQueryIsolationLevel));
        for (final Map.Entry<Integer, EngineRuntime.QueryableStore> entry : stores.entrySet()) {
            final int partition = entry.getKey();
            if (!request.isAllPartitions() && !request.getPartitions().contains(partition)) {
                continue;
            }
            final EngineRuntime.QueryableStore local = entry.getValue();
            // As in Kafka Streams, a query that requires an active task is refused by a standby replica and by an
            // active task whose thread is not RUNNING (in a rebalance, or while tasks of its assignment restore).
            if (request.isRequireActive() && (!local.active() || !"RUNNING".equals(local.threadState()))) {
                result.addResult(partition, QueryResult.forFailure(FailureReason.NOT_ACTIVE,
                    "Query requires a running active task, but partition was in state " + local.threadState()
                        + " and was " + (local.active() ? "active" : "not active") + "."));
            } else {
                final PositionBound bound = request.isRequireActive() ? PositionBound.unbounded() : request.getPositionBound();
                result.addResult(partition, local.store().query(request.getQuery(), bound, queryConfig));
            }
        }
        if (!request.isAllPartitions()) {
            for (final Integer partition : request.getPartitions()) {
                if (!result.getPartitionResults().containsKey(partition)) {
                    result.addResult(partition, QueryResult.forFailure(FailureReason.NOT_PRESENT,
                        "The requested partition was not present at the time of the query."));
                }
            }
        }
        return result;
    }

    // ---------------------------------------------------------------- pause and resume

    /**
     * Pauses processing, as Kafka Streams does: within a turn of their loop the engine threads stop
     * processing, punctuating and restoring their tasks, those assigned later included, and stop fetching
     * their inputs; they go on polling, so they stay in the group without a rebalance, and on committing
     * what they processed before. A running client stays RUNNING, and the global thread goes on; a task with
     * changelogs assigned while paused waits unopened until resumed, so the client is REBALANCING meanwhile.
     * Called before {@link #start()}, the client starts paused. Nothing is shared with other instances.
     */
    public void pause() {
        if (apacheRuntime != null) {
            apacheRuntime.pause();
            return;
        }
        topologyMetadata.pauseTopology(TopologyMetadata.UNNAMED_TOPOLOGY);
        engineFollowsPause();
    }

    /** True while processing is paused ({@link #pause()}). */
    public boolean isPaused() {
        if (apacheRuntime != null) {
            return apacheRuntime.isPaused();
        }
        return topologyMetadata.isPaused(TopologyMetadata.UNNAMED_TOPOLOGY);
    }

    /** Resumes processing where it stopped: each task goes on from the first record it had not processed. */
    public void resume() {
        if (apacheRuntime != null) {
            apacheRuntime.resume();
            return;
        }
        topologyMetadata.resumeTopology(TopologyMetadata.UNNAMED_TOPOLOGY);
        engineFollowsPause();
    }

    private void engineFollowsPause() {
        final EngineRuntime current = engine;
        if (current != null) {
            current.followPause();
        }
    }

    /** Kafka Streams applies the consumer to each stream thread; Sluice runs none, so none is visited. */
    protected int processStreamThread(final Consumer<StreamThread> consumer) {
        if (apacheRuntime != null) {
            return apacheRuntime.processStreamThread(consumer);
        }
        return 0;
    }

    public synchronized ClientInstanceIds clientInstanceIds(final Duration timeout) {
        if (apacheRuntime != null) {
            return apacheRuntime.clientInstanceIds(timeout);
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("The timeout cannot be negative.");
        }
        if (state().hasNotStarted()) {
            throw new IllegalStateException("KafkaStreams has not been started, you can retry after calling start().");
        }
        if (state().isShuttingDown() || state.hasCompletedShutdown()) {
            throw new IllegalStateException("KafkaStreams has been stopped (" + state + ").");
        }
        throw new UnsupportedOperationException("KafkaStreams.clientInstanceIds: Sluice's engine uses librdkafka "
            + "clients, whose client telemetry instance ids are not exposed yet");
    }

    // ---------------------------------------------------------------- local threads and lags

    /**
     * One entry per engine thread that runs tasks, with the tasks it reported running and the standby replicas it
     * keeps. Client ids
     * follow Kafka Streams' naming; the engine's own clients are not visible from the JVM.
     */
    public Set<ThreadMetadata> metadataForLocalThreads() {
        if (apacheRuntime != null) {
            return apacheRuntime.metadataForLocalThreads();
        }
        final EngineRuntime current = currentEngine();
        if (current == null || !isRunningOrRebalancing()) {
            return Set.of();
        }
        final Map<String, String> threadStates = current.threadStates();
        final Map<String, Set<TaskMetadata>> tasksByThread = new TreeMap<>();
        threadStates.keySet().forEach(thread -> tasksByThread.put(thread, new HashSet<>()));
        current.localTasks().forEach((task, metadata) -> {
            final String thread = taskThreads.get(task);
            if (thread != null) {
                tasksByThread.computeIfAbsent(thread, t -> new HashSet<>()).add(metadata);
            }
        });
        final Map<String, Set<TaskMetadata>> standbysByThread = current.standbyTasks();
        standbysByThread.keySet().forEach(thread -> tasksByThread.computeIfAbsent(thread, t -> new HashSet<>()));
        final Set<ThreadMetadata> result = new HashSet<>();
        tasksByThread.forEach((thread, active) -> result.add(new ThreadMetadataImpl(thread,
            threadStates.getOrDefault(thread, "RUNNING"),
            ClientUtils.consumerClientId(thread), ClientUtils.restoreConsumerClientId(thread),
            ClientUtils.producerClientId(thread), ClientUtils.adminClientId(clientId), active,
            standbysByThread.getOrDefault(thread, Set.of()))));
        return result;
    }

    /**
     * For each logged store of each local task, its changelog's end offset and how far the store is: a
     * restoring task's as far as its restoration got, a running one's at the end (lag 0), as Kafka Streams
     * counts a running active task caught up; a standby replica's as far as it read its changelog; a task held
     * unopened while processing is paused, as its stores were left on disk.
     */
    public Map<String, Map<Integer, LagInfo>> allLocalStorePartitionLags() {
        if (apacheRuntime != null) {
            return apacheRuntime.allLocalStorePartitionLags();
        }
        final EngineRuntime current = currentEngine();
        if (current == null || !isRunningOrRebalancing()) {
            return Map.of();
        }
        final String applicationId = applicationConfigs.getString(StreamsConfig.APPLICATION_ID_CONFIG);
        final Map<TopicPartition, String> storeNameByChangelog = new HashMap<>();
        final InternalTopologyBuilder builder = topologyMetadata.lookupBuilderForNamedTopology(null);
        builder.stateStores().forEach((storeName, factory) -> {
            final String changelog = StoreChangelogs.changelogTopic(builder, applicationId,
                builder.sourceTopicsForStore(storeName), factory);
            if (changelog != null) {
                current.localStores(storeName).keySet().forEach(partition ->
                    storeNameByChangelog.put(new TopicPartition(changelog, partition), storeName));
            }
        });
        // A restoring task's store is as far as its restoration got; a running one's lag is 0, as Kafka
        // Streams counts an active task that consumes its changelog as fast as it can; the store of a task
        // held while processing is paused, or of a replica that has not read yet, is where it was left.
        final Map<TopicPartition, Long> restoredTo = new HashMap<>();
        current.idleStorePositions().forEach(idle -> {
            storeNameByChangelog.put(idle.changelog(), idle.store());
            restoredTo.put(idle.changelog(), idle.offset());
        });
        current.restoring().forEach(restoring -> {
            storeNameByChangelog.put(restoring.changelog(), restoring.store());
            restoredTo.put(restoring.changelog(), restoring.offset());
        });
        // A standby replica's store is as far as it read its changelog.
        current.followed().forEach(followed -> {
            storeNameByChangelog.put(followed.changelog(), followed.store());
            restoredTo.put(followed.changelog(), followed.offset());
        });
        if (storeNameByChangelog.isEmpty()) {
            return Map.of();
        }
        final Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> endOffsets =
            ClientUtils.fetchEndOffsets(storeNameByChangelog.keySet(), adminClient);
        final Map<String, Map<Integer, LagInfo>> lags = new TreeMap<>();
        endOffsets.forEach((changelog, end) -> {
            final long position = Math.min(restoredTo.getOrDefault(changelog, end.offset()), end.offset());
            lags.computeIfAbsent(storeNameByChangelog.get(changelog), s -> new TreeMap<>())
                .put(changelog.partition(), new LagInfo(position, end.offset()));
        });
        return Collections.unmodifiableMap(lags);
    }

    /** Kafka Streams computes lags from its own tasks; Sluice has none, so this is the local lags. */
    protected Map<String, Map<Integer, LagInfo>> allLocalStorePartitionLags(final List<Task> tasksToCollectLagFor) {
        if (apacheRuntime != null) {
            return apacheRuntime.allLocalStorePartitionLags(tasksToCollectLagFor);
        }
        return allLocalStorePartitionLags();
    }
}
