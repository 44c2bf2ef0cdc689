package dev.sluice.streams.runtime.internals;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.common.utils.internals.LogContext;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.errors.TaskAssignmentException;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.EngineTaskManager;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.processor.internals.assignment.AssignorError;
import org.apache.kafka.streams.processor.internals.assignment.ReferenceContainer;
import org.slf4j.Logger;

/**
 * A stream thread's member of a classic group: Kafka's Java consumer with Kafka Streams' partition assignor,
 * configured from the application's config as Kafka Streams configures its main consumer, so the subscription and
 * assignment data are Kafka Streams' own (sticky high-availability assignment, standby and warm-up tasks, probing
 * rebalances, rack awareness, a custom task assignor). It subscribes to the topics it is given, not to the
 * topology's patterns: the engine fetches only partitions of topics its own topology knows. Under the cooperative
 * protocol a revocation comes first, then the new assignment.
 */
final class ClassicGroupMember implements KafkaStreamsGroupMember {

    private final Logger log;
    private final Time time;
    private final Listener listener;
    private final ReferenceContainer references;
    private final EngineTaskManager taskManager;
    private final Consumer<byte[], byte[]> consumer;
    private final Rebalances rebalances = new Rebalances();
    /** The topology's pattern sources: a topic they matched may be deleted before the engine matches again. */
    private final List<Pattern> sourcePatterns;
    private List<String> topics = List.of();
    private Map<TaskId, Set<TopicPartition>> assignedActive = Map.of();
    private Map<TaskId, Set<TopicPartition>> assignedStandby = Map.of();
    /**
     * The member gave up partitions when its assignment arrived, so the consumer joins again at once: under the
     * cooperative protocol the revoked tasks are handed out in that follow-up rebalance.
     */
    private boolean revokedByAssignment;

    /** See {@link KafkaStreamsGroupMember#create}. */
    ClassicGroupMember(final StreamsConfig config, final TopologyMetadata topology, final ProcessId processId,
                       final String threadClientId, final int threadIndex, final Admin admin,
                       final StreamsMetadataState metadataState, final Supplier<Map<TaskId, Long>> taskOffsetSums,
                       final Listener listener, final Time time) {
        final String logPrefix = String.format("stream-thread [%s] ", threadClientId);
        this.log = new LogContext(logPrefix).logger(ClassicGroupMember.class);
        this.time = time;
        this.listener = listener;
        this.taskManager = new EngineTaskManager(time, processId, logPrefix, topology, taskOffsetSums, this::assignment);
        this.sourcePatterns = PatternSubscription.sourcePatterns(topology);
        this.references = new ReferenceContainer();
        references.adminClient = admin;
        references.taskManager = taskManager;
        references.streamsMetadataState = metadataState;
        references.time = time;
        references.clientTags = config.getClientTags();
        final Map<String, Object> consumerConfigs = config.getMainConsumerConfigs(
            config.getString(StreamsConfig.APPLICATION_ID_CONFIG), threadClientId + "-consumer", threadIndex);
        consumerConfigs.put(StreamsConfig.InternalConfig.REFERENCE_CONTAINER_PARTITION_ASSIGNOR, references);
        this.consumer = new KafkaConsumer<>(consumerConfigs, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        references.mainConsumer = consumer;
    }

    @Override
    public void subscribe(final Collection<String> topics) {
        this.topics = List.copyOf(topics);
        consumer.subscribe(this.topics, rebalances);
    }

    @Override
    public void rejoin() {
        consumer.unsubscribe();
        consumer.subscribe(topics, rebalances);
    }

    /**
     * A follow-up rebalance the assignor scheduled (a probing rebalance, which moves a task to a warm-up that
     * caught up) is started once it is due.
     */
    @Override
    public void poll() {
        if (!consumer.poll(Duration.ZERO).isEmpty()) {
            throw new IllegalStateException("The group member fetched records, but it pauses everything it is assigned");
        }
        final long followUpMs = references.nextScheduledRebalanceMs.get();
        if (!taskManager.rebalanceInProgress() && followUpMs < time.milliseconds()) {
            log.info("Triggering the followup rebalance scheduled for {}.", Utils.toLogDateTimeFormat(followUpMs));
            consumer.enforceRebalance("triggered followup rebalance scheduled for " + followUpMs);
            references.nextScheduledRebalanceMs.set(Long.MAX_VALUE);
        }
        final StreamsException nonFatal = references.nonFatalExceptionsToHandle.poll();
        if (nonFatal != null) {
            throw nonFatal;
        }
    }

    @Override
    public Consumer<byte[], byte[]> consumer() {
        return consumer;
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return consumer.groupMetadata();
    }

    /** From the assignor's asking for the member's subscription data until the member's assignment. */
    @Override
    public boolean rebalanceInProgress() {
        return taskManager.rebalanceInProgress();
    }

    @Override
    public void commit(final Map<TopicPartition, OffsetAndMetadata> offsets) {
        consumer.commitSync(offsets);
    }

    @Override
    public void requestApplicationShutdown() {
        references.assignmentErrorCode.set(AssignorError.SHUTDOWN_REQUESTED.code());
        consumer.enforceRebalance("Shutdown requested");
    }

    @Override
    public void close() {
        consumer.close();
    }

    private void assignment(final Map<TaskId, Set<TopicPartition>> active, final Map<TaskId, Set<TopicPartition>> standby) {
        assignedActive = active;
        assignedStandby = standby;
    }

    /**
     * The assignor found a source topic missing: when every topic that no longer exists, of those the rebalance
     * began with and those subscribed now, is one a pattern source matched (deleted before the engine matched the
     * patterns again, or after the engine subscribed without it while the rebalance was under way), the member
     * subscribes to the topics that are left, which joins the group again, and says true. Kafka Streams' consumer,
     * subscribed with the patterns, stops naming such a topic as soon as its metadata misses it; a missing named
     * source topic still fails the thread.
     */
    private boolean resubscribedWithoutDeletedMatches() {
        if (sourcePatterns.isEmpty()) {
            return false;
        }
        final Set<String> existing = consumer.listTopics().keySet();
        final Set<String> named = new TreeSet<>(taskManager.rebalanceTopics());
        named.addAll(topics);
        final List<String> deleted = named.stream().filter(topic -> !existing.contains(topic)).toList();
        final boolean onlyMatches = !deleted.isEmpty() && deleted.stream()
            .allMatch(topic -> sourcePatterns.stream().anyMatch(pattern -> pattern.matcher(topic).matches()));
        if (!onlyMatches) {
            return false;
        }
        log.info("Topics {} that a pattern source matched were deleted; subscribing to the topics that are left", deleted);
        subscribe(topics.stream().filter(existing::contains).toList());
        return true;
    }

    /** Kafka Streams' rebalance listener's part, for tasks the engine runs. */
    private final class Rebalances implements ConsumerRebalanceListener {

        @Override
        public void onPartitionsRevoked(final Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                // Before the member asks for its subscription data a revocation is the eager protocol's, made
                // before joining; within the rebalance it is the cooperative one's, made with the assignment.
                revokedByAssignment = taskManager.rebalanceInProgress();
                listener.revoked(Set.copyOf(partitions));
            }
        }

        @Override
        public void onPartitionsLost(final Collection<TopicPartition> partitions) {
            listener.lost(Set.copyOf(partitions));
        }

        @Override
        public void onPartitionsAssigned(final Collection<TopicPartition> partitions) {
            consumer.pause(partitions);
            final int error = references.assignmentErrorCode.get();
            if (error == AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA.code() && resubscribedWithoutDeletedMatches()) {
                // Kafka Streams' assignor sets an error code and never clears it: its thread ends on any.
                references.assignmentErrorCode.set(AssignorError.NONE.code());
                taskManager.handleRebalanceComplete();
                // Nothing is assigned until the member, subscribed anew, joins again; what it gave up in this
                // rebalance calls for no other follow-up.
                revokedByAssignment = false;
                listener.assigned(Map.of(), Map.of(), true);
                return;
            } else if (error == AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA.code()) {
                log.error("Received error code {}. {}", AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA.codeName(),
                    AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA.description());
                taskManager.handleRebalanceComplete();
                throw new MissingSourceTopicException("One or more source topics were missing during rebalance");
            } else if (error == AssignorError.VERSION_PROBING.code()) {
                log.info("Received version probing code {}", AssignorError.VERSION_PROBING);
            } else if (error == AssignorError.ASSIGNMENT_ERROR.code()) {
                log.error("Received error code {}", AssignorError.ASSIGNMENT_ERROR);
                taskManager.handleRebalanceComplete();
                throw new TaskAssignmentException("Hit an unexpected exception during task assignment phase of rebalance");
            } else if (error == AssignorError.SHUTDOWN_REQUESTED.code()) {
                log.error("A Kafka Streams client in this Kafka Streams application is requesting to shutdown the application");
                taskManager.handleRebalanceComplete();
                listener.applicationShutdownRequested();
                return;
            } else if (error != AssignorError.NONE.code()) {
                log.error("Received unknown error code {}", error);
                throw new TaskAssignmentException("Hit an unrecognized exception during rebalance");
            }
            taskManager.handleRebalanceComplete();
            final boolean followUpDue = revokedByAssignment
                || references.nextScheduledRebalanceMs.get() < time.milliseconds();
            revokedByAssignment = false;
            listener.assigned(assignedActive, assignedStandby, followUpDue);
        }
    }
}
