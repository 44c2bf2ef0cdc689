package org.apache.kafka.streams.processor.internals;

import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.metrics.StreamsMetricsImpl;

/**
 * Kafka Streams' stream thread object for one of the engine's threads, as {@code KafkaStreams}' protected
 * {@code threads} list holds stream threads. It never runs (the engine thread does the work); it bears the
 * thread's name, its group member's consumer ({@code mainConsumer}, with Kafka Streams' assignor under the classic
 * protocol), and its state, which follows the engine thread through Kafka Streams' valid transitions, each told to
 * its state listener on the thread that made the change. Interactive queries read a thread's state from here, as
 * Kafka Streams reads it from its stream threads.
 *
 * <p>The metrics Kafka Streams' constructor registers for a thread go to a registry of this object's own: the
 * client's thread metrics are the engine thread's. In this package because the state is set through Kafka
 * Streams' package-private {@code setState}.
 */
public final class EngineStreamThread extends StreamThread {

    private final Metrics ownMetrics;
    private final TopologyMetadata topology;

    private EngineStreamThread(final String name, final String clientId, final StreamsConfig config,
                               final Consumer<byte[], byte[]> memberConsumer, final TopologyMetadata topology,
                               final UUID processId,
                               final StreamsMetadataState metadataState, final Time time, final Metrics ownMetrics) {
        super(time, config, null, memberConsumer, memberConsumer, null,
            null, new NoTasks(time, processId, name, topology),
            null, new StreamsMetricsImpl(ownMetrics, name, time), topology, processId, name,
            new LogContext(String.format("stream-thread [%s] ", name)), new AtomicInteger(), new AtomicLong(Long.MAX_VALUE),
            new ConcurrentLinkedQueue<>(), () -> { }, (error, skipped) -> { }, cacheSize -> { }, Optional.empty(),
            metadataState, null, 0L);
        this.ownMetrics = ownMetrics;
        this.topology = topology;
        updateThreadMetadata(ClientUtils.adminClientId(clientId));
        // Kafka Streams' client listens to its threads to derive its own state; Sluice's client follows the engine,
        // so this listener is only there for a subclass of KafkaStreams to chain to, as Kafka Streams' own do.
        setStateListener((thread, newState, oldState) -> { });
    }

    /**
     * The stream thread object of engine thread {@code name} of the client {@code clientId}, whose group member's
     * consumer is {@code memberConsumer}: CREATED until {@link #follow} moves it.
     */
    public static EngineStreamThread create(final String name, final String clientId, final StreamsConfig config,
                                            final Consumer<byte[], byte[]> memberConsumer,
                                            final TopologyMetadata topology, final UUID processId,
                                            final StreamsMetadataState metadataState, final Time time) {
        return new EngineStreamThread(name, clientId, config, memberConsumer, topology, processId, metadataState, time,
            new Metrics(time));
    }

    /**
     * The task manager Kafka Streams' thread object asks for its tasks and its producer's client id, for the thread's
     * metadata: the engine's tasks are not Kafka Streams' task objects, so it has none.
     */
    private static final class NoTasks extends TaskManager {
        private final String threadName;

        NoTasks(final Time time, final UUID processId, final String threadName, final TopologyMetadata topology) {
            super(time, null, new ProcessId(processId), String.format("stream-thread [%s] ", threadName), null, null,
                null, topology, null, null, null, null);
            this.threadName = threadName;
        }

        @Override
        Map<TaskId, Task> activeTaskMap() {
            return Map.of();
        }

        @Override
        Map<TaskId, StandbyTask> standbyTaskMap() {
            return Map.of();
        }

        @Override
        String producerClientIds() {
            return ClientUtils.producerClientId(threadName);
        }
    }

    /**
     * Moves the state to {@code target} along the shortest way Kafka Streams allows (a thread that starts running
     * passes through PARTITIONS_ASSIGNED), telling the listener each step on the calling thread; nothing when the
     * state is there already or cannot get there (a thread shut down, or moved on meanwhile by another caller).
     */
    public synchronized void follow(final State target) {
        final Map<State, State> cameFrom = new EnumMap<>(State.class);
        final ArrayDeque<State> toVisit = new ArrayDeque<>();
        final State start = state();
        toVisit.add(start);
        cameFrom.put(start, start);
        while (!toVisit.isEmpty() && !cameFrom.containsKey(target)) {
            final State from = toVisit.poll();
            for (final State to : State.values()) {
                if (from.isValidTransition(to) && !cameFrom.containsKey(to)) {
                    cameFrom.put(to, from);
                    toVisit.add(to);
                }
            }
        }
        if (start == target || !cameFrom.containsKey(target)) {
            return;
        }
        final ArrayDeque<State> path = new ArrayDeque<>();
        for (State step = target; step != start; step = cameFrom.get(step)) {
            path.push(step);
        }
        for (final State step : path) {
            try {
                if (setState(step) == null) {
                    return;
                }
            } catch (final StreamsException movedMeanwhile) {
                // Only a state set from outside (by reflection, as Kafka Streams' tests set it) gets here: the next
                // change follows from wherever it was set.
                return;
            }
        }
    }

    /**
     * The thread's end: the registry of the metrics Kafka Streams' constructor registered is closed, and the thread
     * is taken off the topology's threads, with which the constructor registered it, as Kafka Streams' thread does
     * as it shuts down.
     */
    public void ended() {
        follow(State.DEAD);
        ownMetrics.close();
        topology.unregisterThread(getName());
    }

    /** The engine thread does the work: this object is never started. */
    @Override
    public synchronized void start() {
        throw new UnsupportedOperationException("Sluice's engine runs this stream thread; its object is not started");
    }
}
