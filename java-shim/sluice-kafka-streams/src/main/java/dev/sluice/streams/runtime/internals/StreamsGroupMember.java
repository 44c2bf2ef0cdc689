package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceData;
import org.apache.kafka.clients.consumer.internals.StreamsRebalanceListener;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.StreamsGroupHeartbeatResponseData;
import org.apache.kafka.common.requests.StreamsGroupHeartbeatResponse;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Timer;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.TopologyException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.StreamsGroupData;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.Task;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.slf4j.Logger;

/**
 * A stream thread's member of a streams group ({@code group.protocol=streams}): Kafka's consumer with the
 * streams-group support Kafka Streams' thread uses, so the member sends the topology (subtopologies, source,
 * repartition and changelog topics, co-partition groups, the description when
 * {@code topology.description.push.enabled}), its endpoint, rack, client tags, task offset sums and end offset
 * sums, and the broker assigns active, standby and warm-up tasks. Static membership ({@code group.instance.id})
 * and every client setting are the consumer's. The broker's answers besides the assignment are handled as Kafka Streams' thread handles them:
 * an application shutdown requested by any client, source topics missing (for two heartbeat intervals) or
 * incorrectly partitioned, and every client's partitions for interactive queries' metadata.
 */
final class StreamsGroupMember implements KafkaStreamsGroupMember {

    private final Logger log;
    private final Time time;
    private final Listener listener;
    private final StreamsMetadataState metadataState;
    private final Supplier<Map<TaskId, Long>> taskOffsetSums;
    /**
     * The offset sums the consumer's background thread reports, taken on the owning thread at each
     * {@link #poll()}: the tasks' state belongs to that thread.
     */
    private final AtomicReference<Map<StreamsRebalanceData.TaskId, Long>> offsetSumSnapshot = new AtomicReference<>(Map.of());
    private final Supplier<Map<TaskId, Long>> taskEndOffsetSums;
    /** The end offset sums, taken as the offset sums are. */
    private final AtomicReference<Map<StreamsRebalanceData.TaskId, Long>> endOffsetSumSnapshot = new AtomicReference<>(Map.of());
    private final StreamsRebalanceData data;
    private final AsyncKafkaConsumer<byte[], byte[]> consumer;
    private final Rebalances rebalances = new Rebalances();
    private List<String> topics = List.of();
    private Map<StreamsRebalanceData.HostInfo, StreamsRebalanceData.EndpointPartitions> partitionsByHost;
    private Timer missingTopicsTimer;

    /** See {@link KafkaStreamsGroupMember#create}. */
    StreamsGroupMember(final StreamsConfig config, final TopologyMetadata topology, final ProcessId processId,
                       final String threadClientId, final int threadIndex, final StreamsMetadataState metadataState,
                       final Supplier<Map<TaskId, Long>> taskOffsetSums,
                       final Supplier<Map<TaskId, Long>> taskEndOffsetSums, final Listener listener, final Time time) {
        if (topology.usesPatternSubscription()) {
            throw new IllegalArgumentException("Pattern subscription is not yet supported with the Streams rebalance protocol");
        }
        this.log = new LogContext(String.format("stream-thread [%s] ", threadClientId)).logger(StreamsGroupMember.class);
        this.time = time;
        this.listener = listener;
        this.metadataState = metadataState;
        this.taskOffsetSums = taskOffsetSums;
        this.taskEndOffsetSums = taskEndOffsetSums;
        this.data = StreamsGroupData.create(processId.id(), config, topology, offsetSumSnapshot::get,
            endOffsetSumSnapshot::get);
        final Map<String, Object> consumerConfigs = config.getMainConsumerConfigs(
            config.getString(StreamsConfig.APPLICATION_ID_CONFIG), threadClientId + "-consumer", threadIndex);
        final ByteArrayDeserializer keys = new ByteArrayDeserializer();
        final ByteArrayDeserializer values = new ByteArrayDeserializer();
        this.consumer = new AsyncKafkaConsumer<>(
            new ConsumerConfig(ConsumerConfig.appendDeserializerToConfig(consumerConfigs, keys, values)), keys, values,
            Optional.of(data));
    }

    @Override
    public void subscribe(final Collection<String> topics) {
        this.topics = List.copyOf(topics);
        consumer.subscribe(this.topics, rebalances);
    }

    /** The tasks are lost before the member leaves, as Kafka Streams' thread loses them once fenced. */
    @Override
    public void rejoin() {
        rebalances.onAllTasksLost();
        consumer.unsubscribe();
        consumer.subscribe(topics, rebalances);
    }

    @Override
    public void poll() {
        if (!consumer.poll(Duration.ZERO).isEmpty()) {
            throw new IllegalStateException("The group member fetched records, but it pauses everything it is assigned");
        }
        handleStatuses();
        updateMetadata();
        offsetSumSnapshot.set(streamsProtocolOffsetSums(taskOffsetSums.get()));
        endOffsetSumSnapshot.set(streamsProtocolTaskIds(taskEndOffsetSums.get()));
    }

    @Override
    public Consumer<byte[], byte[]> consumer() {
        return consumer;
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return consumer.groupMetadata();
    }

    /**
     * Never: the broker moves tasks between epochs without a group-wide rebalance, and Kafka Streams' thread
     * under this protocol never holds its commits back either.
     */
    @Override
    public boolean rebalanceInProgress() {
        return false;
    }

    @Override
    public void commit(final Map<TopicPartition, OffsetAndMetadata> offsets) {
        consumer.commitSync(offsets);
    }

    @Override
    public void requestApplicationShutdown() {
        data.requestShutdown();
    }

    @Override
    public void close() {
        consumer.close();
    }

    /**
     * The streams protocol's offset sums: a running active task is left out (the broker keeps it where it runs),
     * where the classic assignor is told {@link Task#LATEST_OFFSET}.
     */
    private static Map<StreamsRebalanceData.TaskId, Long> streamsProtocolOffsetSums(final Map<TaskId, Long> sums) {
        final Map<TaskId, Long> reported = new HashMap<>(sums);
        reported.values().removeIf(sum -> sum == Task.LATEST_OFFSET);
        return streamsProtocolTaskIds(reported);
    }

    private static Map<StreamsRebalanceData.TaskId, Long> streamsProtocolTaskIds(final Map<TaskId, Long> sums) {
        final Map<StreamsRebalanceData.TaskId, Long> reported = new HashMap<>();
        sums.forEach((task, sum) ->
            reported.put(new StreamsRebalanceData.TaskId(String.valueOf(task.subtopology()), task.partition()), sum));
        return Map.copyOf(reported);
    }

    private void handleStatuses() {
        String missingTopics = null;
        for (final StreamsGroupHeartbeatResponseData.Status status : data.statuses()) {
            if (status.statusCode() == StreamsGroupHeartbeatResponse.Status.SHUTDOWN_APPLICATION.code()) {
                log.error("A Kafka Streams client in this Kafka Streams application is requesting to shutdown the application");
                listener.applicationShutdownRequested();
                return;
            } else if (status.statusCode() == StreamsGroupHeartbeatResponse.Status.MISSING_SOURCE_TOPICS.code()) {
                missingTopics = status.statusDetail();
            } else if (status.statusCode() == StreamsGroupHeartbeatResponse.Status.INCORRECTLY_PARTITIONED_TOPICS.code()) {
                log.error(status.statusDetail());
                throw new TopologyException(status.statusDetail());
            }
        }
        if (missingTopics == null) {
            missingTopicsTimer = null;
            return;
        }
        // Topics may be on their way (created by the application just before it started): the member waits two
        // heartbeats before it gives up, as Kafka Streams' thread does.
        if (missingTopicsTimer == null) {
            final long timeoutMs = 2L * data.heartbeatIntervalMs();
            missingTopicsTimer = time.timer(timeoutMs);
            log.info("Missing source topics detected: {}. Will wait up to {}ms before failing.", missingTopics, timeoutMs);
        } else {
            missingTopicsTimer.update();
        }
        if (missingTopicsTimer.isExpired()) {
            final String message = String.format("Missing source topics: %s. Timeout exceeded after %dms.",
                missingTopics, missingTopicsTimer.elapsedMs());
            log.error(message);
            throw new MissingSourceTopicException(message);
        }
    }

    /** Interactive queries' metadata learns every client's partitions whenever the broker sent new ones. */
    private void updateMetadata() {
        final Map<StreamsRebalanceData.HostInfo, StreamsRebalanceData.EndpointPartitions> latest = data.partitionsByHost();
        if (latest != partitionsByHost) {
            partitionsByHost = latest;
            StreamsGroupData.updateMetadata(metadataState, latest);
        }
    }

    /** The streams protocol's rebalance callbacks, in the partitions the engine's tasks read. */
    private final class Rebalances implements StreamsRebalanceListener {

        @Override
        public void onTasksRevoked(final Set<StreamsRebalanceData.TaskId> tasks) {
            log.info("Revoking active tasks {}.", tasks);
            final Set<TopicPartition> partitions = inputPartitions(tasks.stream()).values().stream()
                .flatMap(Set::stream).collect(Collectors.toSet());
            if (!partitions.isEmpty()) {
                listener.revoked(partitions);
            }
        }

        @Override
        public void onTasksAssigned(final StreamsRebalanceData.Assignment assignment) {
            final StreamsRebalanceData.Assignment tasks = deduplicated(assignment);
            consumer.pause(consumer.assignment());
            // The broker hands out a task given up elsewhere at a later heartbeat, with no rebalance to join.
            listener.assigned(inputPartitions(tasks.activeTasks().stream()),
                inputPartitions(Stream.concat(tasks.standbyTasks().stream(), tasks.warmupTasks().stream())), false);
            data.setReconciledAssignment(tasks);
        }

        @Override
        public void onAllTasksLost() {
            final Set<TopicPartition> partitions = inputPartitions(data.reconciledAssignment().activeTasks().stream())
                .values().stream().flatMap(Set::stream).collect(Collectors.toSet());
            data.setReconciledAssignment(StreamsRebalanceData.Assignment.EMPTY);
            if (!partitions.isEmpty()) {
                listener.lost(partitions);
            }
        }

        /** A task's input partitions: its subtopology's source and repartition topics' partition of its number. */
        private Map<TaskId, Set<TopicPartition>> inputPartitions(final Stream<StreamsRebalanceData.TaskId> tasks) {
            return tasks.collect(Collectors.toMap(
                task -> new TaskId(Integer.parseInt(task.subtopologyId()), task.partitionId()),
                task -> {
                    final StreamsRebalanceData.Subtopology subtopology = data.subtopologies().get(task.subtopologyId());
                    return Stream.concat(subtopology.sourceTopics().stream(),
                            subtopology.repartitionSourceTopics().keySet().stream())
                        .map(topic -> new TopicPartition(topic, task.partitionId()))
                        .collect(Collectors.toSet());
                }));
        }

        /**
         * A task given as both standby and warm-up is one replica; a task given as active and as a replica runs as
         * active, as Kafka Streams' listener decides.
         */
        private StreamsRebalanceData.Assignment deduplicated(final StreamsRebalanceData.Assignment assignment) {
            final Set<StreamsRebalanceData.TaskId> both = new TreeSet<>(assignment.standbyTasks());
            both.retainAll(assignment.warmupTasks());
            if (!both.isEmpty()) {
                log.warn("Tasks {} were assigned as standby tasks and as warm-up tasks; each is one replica", both);
            }
            final Set<StreamsRebalanceData.TaskId> replicas = new TreeSet<>(assignment.standbyTasks());
            replicas.addAll(assignment.warmupTasks());
            replicas.retainAll(assignment.activeTasks());
            if (!replicas.isEmpty()) {
                log.warn("Tasks {} were assigned as active tasks and as replicas; they run as active tasks", replicas);
            }
            final Set<StreamsRebalanceData.TaskId> standby = new HashSet<>(assignment.standbyTasks());
            standby.removeAll(assignment.activeTasks());
            final Set<StreamsRebalanceData.TaskId> warmup = new HashSet<>(assignment.warmupTasks());
            warmup.removeAll(assignment.activeTasks());
            warmup.removeAll(standby);
            return new StreamsRebalanceData.Assignment(assignment.activeTasks(), standby, warmup,
                assignment.isGroupReady());
        }
    }
}
