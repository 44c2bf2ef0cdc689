package dev.sluice.streams.runtime.internals;

import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.internals.StreamsConfigUtils;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;

/**
 * One stream thread's membership in the application's group, spoken as Kafka Streams' own threads speak it, under
 * the rebalance protocol the application chose ({@code group.protocol}): Kafka's Java consumer with Kafka Streams'
 * partition assignor in a classic group ({@link ClassicGroupMember}), or Kafka's consumer as a member of a streams
 * group whose assignment the broker computes ({@link StreamsGroupMember}). The group data are therefore Kafka
 * Streams' own, instances of Apache Kafka Streams and of Sluice can share one group, and every client setting of
 * the application applies to the membership.
 *
 * <p>A member never fetches: what it is assigned stays paused, and the engine's own consumer fetches the input. It
 * is polled by the thread that owns the tasks, and the rebalance callbacks of its {@link Listener} run inside
 * {@link #poll()}, before the change applies, as Kafka Streams' do: a revocation comes first, then the new
 * assignment.
 */
public interface KafkaStreamsGroupMember extends AutoCloseable {

    /** What a rebalance tells the thread that owns the member; every call comes inside {@link #poll()}. */
    interface Listener {

        /** The partitions leave this member: the tasks reading them commit and close before this returns. */
        void revoked(Set<TopicPartition> partitions);

        /** The member fell out of the group: the tasks reading these partitions close without committing. */
        void lost(Set<TopicPartition> partitions);

        /**
         * The member's whole task set after a rebalance: active tasks with their input partitions, standby
         * (and warm-up) tasks with the input partitions of their task. {@code followUpDue} when the member joins
         * again right away, because the assignment is a step towards the group's next one: it gave up tasks
         * that go to other members in the follow-up, or its assignor asked for the follow-up at once.
         */
        void assigned(Map<TaskId, Set<TopicPartition>> active, Map<TaskId, Set<TopicPartition>> standby,
                      boolean followUpDue);

        /** A client of the application asked every client to shut down (Kafka Streams' SHUTDOWN_APPLICATION). */
        void applicationShutdownRequested();
    }

    /**
     * The member of the given stream thread of this client, under the application's {@code group.protocol}, made as
     * Kafka Streams makes its thread's consumer: it joins the group once {@link #subscribe subscribed}.
     * {@code threadClientId} and {@code threadIndex} name the thread as Kafka Streams names its own
     * ({@code <client id>-StreamThread-<n>}, from 1).
     *
     * @param taskOffsetSums the changelog offset sums of the tasks whose state this client holds, with
     *                       {@link org.apache.kafka.streams.processor.internals.Task#LATEST_OFFSET} for a running
     *                       stateful active task, as Kafka Streams' assignor asks for them
     * @param taskEndOffsetSums the changelog end offset sums of the tasks whose stores the thread brings up to date
     *                       (restoring active tasks, standby replicas), which a streams group's member reports
     * @param metadataState  told every client's partitions after each rebalance, for interactive queries
     */
    static KafkaStreamsGroupMember create(final StreamsConfig config, final TopologyMetadata topology,
                                          final ProcessId processId, final String threadClientId, final int threadIndex,
                                          final Admin admin, final StreamsMetadataState metadataState,
                                          final Supplier<Map<TaskId, Long>> taskOffsetSums,
                                          final Supplier<Map<TaskId, Long>> taskEndOffsetSums, final Listener listener,
                                          final Time time) {
        if (StreamsConfigUtils.streamsProtocolEnabled(config)) {
            return new StreamsGroupMember(config, topology, processId, threadClientId, threadIndex, metadataState,
                taskOffsetSums, taskEndOffsetSums, listener, time);
        }
        return new ClassicGroupMember(config, topology, processId, threadClientId, threadIndex, admin, metadataState,
            taskOffsetSums, listener, time);
    }

    /** The member's consumer, which Kafka Streams' stream thread object holds as its main consumer. */
    Consumer<byte[], byte[]> consumer();

    /**
     * Subscribes to {@code topics} (the topology's source and repartition topics, those a pattern matches
     * included) instead of what the member was subscribed to; the group rebalances at a next {@link #poll()}.
     */
    void subscribe(Collection<String> topics);

    /**
     * Leaves the group and joins it again under a new member id, as Kafka Streams' thread does once its
     * producer was fenced; the listener hears the loss of every partition before this returns.
     */
    void rejoin();

    /**
     * One turn of the membership: heartbeats, joins and rebalances progress, and the listener hears of any change.
     * Throws what Kafka Streams' thread would: a missing source topic, an assignment error, an incorrectly
     * partitioned topic.
     */
    void poll();

    /** The member's group, member id, generation (or epoch) and instance id, which a transaction commits under. */
    ConsumerGroupMetadata groupMetadata();

    /**
     * True from the member's joining a rebalance until its assignment arrives, when the generation a commit is
     * made under is about to change: the thread's regular commits wait, as Kafka Streams' do.
     */
    boolean rebalanceInProgress();

    /** Commits input offsets outside a transaction (at-least-once), under this member's generation. */
    void commit(Map<TopicPartition, OffsetAndMetadata> offsets);

    /** Asks every client of the application to shut down, through the group, as Kafka Streams does. */
    void requestApplicationShutdown();

    /** Leaves the group (unless the member is static, whose place the group keeps until its session ends). */
    @Override
    void close();
}
