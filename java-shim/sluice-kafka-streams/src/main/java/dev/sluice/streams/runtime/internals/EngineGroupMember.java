package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import dev.sluice.streams.runtime.ApplicationShutdownRequestedException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.streams.processor.TaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An engine thread's member of the application's group: a {@link KafkaStreamsGroupMember}, called by the engine
 * thread that owns it, whose rebalances go to the engine as they happen. The engine knows partitions and opens a
 * task with all of its input partitions at once, so each assignment is handed on as the input partitions it
 * adds (with the input partitions of every standby task it keeps), and each revocation or loss as the input
 * partitions of every task it touches; a task whose input partitions change (a topic its pattern matches comes or goes) is handed on as taken away and given back. The
 * native calls run the engine's rebalance listener on the calling thread, inside {@link #poll()}.
 */
final class EngineGroupMember implements KafkaStreamsGroupMember.Listener {

    private static final Logger LOG = LoggerFactory.getLogger(EngineGroupMember.class);

    /**
     * How often the member's consumer is polled at most: the engine thread calls {@link #poll()} on every turn of
     * its loop, a few hundred microseconds apart when it is busy, and a rebalance may wait this long for it.
     */
    private static final long POLL_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(10);

    /** The engine's member this one reports to, from {@link #join} until {@link #close()} returns. */
    private long engineMember;
    private TaskEnvironment environment;
    private KafkaStreamsGroupMember member;
    /** The input partitions of the active tasks this member holds, as the engine was told them. */
    private final Set<TopicPartition> owned = new HashSet<>();
    private final Map<TaskId, Set<TopicPartition>> activeTasks = new HashMap<>();
    private final Map<TaskId, Set<TopicPartition>> standbyTasks = new HashMap<>();
    private boolean rejoinRequested;
    /** Set by any thread: the member asks the group for the application's shutdown at its next poll. */
    private volatile boolean shutdownToRequest;
    private long polledAtNs = System.nanoTime() - POLL_INTERVAL_NS;
    private volatile boolean fenced;

    /** Takes {@code member}, which reports to this listener; made with the stream thread, before its engine thread. */
    void use(final KafkaStreamsGroupMember member) {
        this.member = member;
    }

    /**
     * The engine thread takes the member: it reports to the engine's member {@code engineMember} in
     * {@code environment} from now on, and joins the group subscribed to {@code topics}.
     */
    void join(final long engineMember, final TaskEnvironment environment, final String[] topics) {
        this.engineMember = engineMember;
        this.environment = environment;
        member.subscribe(List.of(topics));
    }

    /**
     * Closes the member's consumer, which leaves the group if it joined (a member whose engine thread never took it
     * did not); a failure is logged, not thrown.
     */
    void leave() {
        try {
            member.close();
        } catch (final RuntimeException e) {
            LOG.warn("The group member did not close cleanly", e);
        }
    }

    /** The changelog offset sums the assignor asks for ({@link TaskEnvironment#taskOffsetSums}). */
    synchronized Map<TaskId, Long> taskOffsetSums() {
        return environment.taskOffsetSums(Set.copyOf(activeTasks.keySet()), Set.copyOf(standbyTasks.keySet()));
    }

    /** The changelog end offset sums a streams group's member reports ({@link TaskEnvironment#taskEndOffsetSums}). */
    synchronized Map<TaskId, Long> taskEndOffsetSums() {
        return environment.taskEndOffsetSums(Set.copyOf(activeTasks.keySet()), Set.copyOf(standbyTasks.keySet()));
    }

    /** One turn of the membership, unless the last was less than 10 ms ago; a rejoin asked for meanwhile happens first. */
    void poll() {
        final long now = System.nanoTime();
        if (now - polledAtNs < POLL_INTERVAL_NS && !rejoinRequested && !shutdownToRequest) {
            return;
        }
        polledAtNs = now;
        try {
            if (rejoinRequested) {
                rejoinRequested = false;
                member.rejoin();
            }
            if (shutdownToRequest) {
                shutdownToRequest = false;
                member.requestApplicationShutdown();
            }
            member.poll();
        } catch (final FencedInstanceIdException e) {
            fenced = true;
            throw e;
        }
    }

    /** True once the coordinator fenced this member's {@code group.instance.id}: it is out of use for good. */
    boolean fenced() {
        return fenced;
    }

    /**
     * Asks every client of the application to shut down through the group at the next {@link #poll()}, as a Kafka
     * Streams thread sends a shutdown request; callable from any thread.
     */
    void requestApplicationShutdown() {
        shutdownToRequest = true;
    }

    /**
     * Leaves the group and joins it again at the next {@link #poll()}: the engine asks for it while it holds
     * what the revocation callbacks need.
     */
    void rejoin() {
        rejoinRequested = true;
    }

    void subscribe(final String[] topics) {
        member.subscribe(List.of(topics));
    }

    /** The member id, generation and instance id (null for a dynamic member), or null while not in the group. */
    String[] groupMetadata() {
        final ConsumerGroupMetadata metadata = member.groupMetadata();
        if (metadata.generationId() < 0) {
            return null;
        }
        return new String[] {metadata.memberId(), String.valueOf(metadata.generationId()),
            metadata.groupInstanceId().orElse(null)};
    }

    /** True while the member takes part in a rebalance that has not assigned it yet. */
    boolean rebalanceInProgress() {
        return member.rebalanceInProgress();
    }

    /** Commits input offsets framed as {@link RuntimeFraming#readInputs}, outside a transaction. */
    void commit(final byte[] offsets) {
        final Map<TopicPartition, OffsetAndMetadata> committed = new LinkedHashMap<>();
        RuntimeFraming.readInputs(offsets).forEach((partition, offset) -> {
            if (offset != null) {
                committed.put(partition, offset);
            }
        });
        member.commit(committed);
    }

    /**
     * The group's committed offsets of the partitions framed as {@link RuntimeFraming#readInputs} (their offsets
     * unread), framed the same way, none for a partition without; null when the group coordinator did not answer
     * within {@code default.api.timeout.ms}. Read by the member's consumer, which knows the coordinator, and stably
     * under exactly-once (its {@code isolation.level} is {@code read_committed}): the offsets of a transaction that
     * has not ended yet are waited for, as Kafka Streams' main consumer reads them.
     */
    byte[] committed(final byte[] partitions) {
        final Set<TopicPartition> asked = RuntimeFraming.readInputs(partitions).keySet();
        final Map<TopicPartition, OffsetAndMetadata> committed;
        try {
            committed = member.consumer().committed(asked);
        } catch (final TimeoutException e) {
            return null;
        }
        final Map<TopicPartition, OffsetAndMetadata> answer = new LinkedHashMap<>();
        for (final TopicPartition partition : asked) {
            answer.put(partition, committed.get(partition));
        }
        return RuntimeFraming.inputs(answer);
    }

    /**
     * Leaves the group; the engine hears the revocation of what the member still held before this returns. The
     * engine thread is ending: a failure is logged, not thrown.
     */
    void close() {
        environment.memberClosed(this);
        leave();
    }

    @Override
    public void revoked(final Set<TopicPartition> partitions) {
        taken(partitions, false);
    }

    @Override
    public void lost(final Set<TopicPartition> partitions) {
        taken(partitions, true);
    }

    @Override
    public void assigned(final Map<TaskId, Set<TopicPartition>> active, final Map<TaskId, Set<TopicPartition>> standby,
                         final boolean followUpDue) {
        final Set<TopicPartition> changed = new HashSet<>();
        synchronized (this) {
            active.forEach((task, inputs) -> {
                final Set<TopicPartition> held = activeTasks.get(task);
                if (held != null && !held.equals(inputs)) {
                    changed.addAll(held);
                }
            });
        }
        if (!changed.isEmpty()) {
            taken(changed, false);
        }
        final Map<TopicPartition, Long> added = new LinkedHashMap<>();
        final Map<TopicPartition, Long> standbyInputs = new LinkedHashMap<>();
        synchronized (this) {
            activeTasks.clear();
            activeTasks.putAll(active);
            standbyTasks.clear();
            standbyTasks.putAll(standby);
            active.values().forEach(inputs -> inputs.forEach(partition -> {
                if (owned.add(partition)) {
                    added.put(partition, null);
                }
            }));
            standby.values().forEach(inputs -> inputs.forEach(partition -> standbyInputs.put(partition, null)));
        }
        if (followUpDue) {
            environment.followUpRebalanceDue();
        }
        partitionsAssigned(engineMember, OffsetFraming.write(added), OffsetFraming.write(standbyInputs));
    }

    /** Ends the engine thread, which shuts the client down (ERROR), as a Kafka Streams thread does. */
    @Override
    public void applicationShutdownRequested() {
        final ApplicationShutdownRequestedException shutdown = new ApplicationShutdownRequestedException(
            "A client of the application asked every client to shut down");
        environment.reportFailure(shutdown);
        throw shutdown;
    }

    /** Hands on the loss of {@code partitions}, with the other input partitions of the tasks they belong to. */
    private void taken(final Set<TopicPartition> partitions, final boolean lost) {
        final Map<TopicPartition, Long> framed = new LinkedHashMap<>();
        synchronized (this) {
            partitions.forEach(partition -> framed.put(partition, null));
            activeTasks.values().removeIf(inputs -> {
                final boolean touched = inputs.stream().anyMatch(partitions::contains);
                if (touched) {
                    inputs.forEach(partition -> framed.put(partition, null));
                }
                return touched;
            });
            owned.removeAll(framed.keySet());
        }
        partitionsRevoked(engineMember, OffsetFraming.write(framed), lost);
    }

    /** The engine's member hears that {@code partitions} (framed as {@link OffsetFraming}) leave it. */
    private static native void partitionsRevoked(long engineMember, byte[] partitions, boolean lost);

    /**
     * The engine's member hears that {@code partitions} were added to it, and that it keeps standby replicas of the
     * tasks {@code standbyInputs} are the input partitions of (both framed as {@link OffsetFraming}).
     */
    private static native void partitionsAssigned(long engineMember, byte[] partitions, byte[] standbyInputs);
}
