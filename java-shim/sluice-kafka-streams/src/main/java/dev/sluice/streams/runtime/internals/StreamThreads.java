package dev.sluice.streams.runtime.internals;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.internals.ClientUtils;
import org.apache.kafka.streams.processor.internals.EngineStreamThread;
import org.apache.kafka.streams.processor.internals.StreamThread;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;

/**
 * The client's stream threads as Kafka Streams' object model shows them. For each engine thread, made before it
 * runs as Kafka Streams makes a stream thread with its client: its group member (Kafka's consumer, with Kafka
 * Streams' assignor under the classic protocol), which the engine thread takes when it joins the group, and its
 * {@link EngineStreamThread}, whose state follows the engine thread's and which leaves the list when the thread
 * ends. A thread added while the client runs is made when its engine thread joins. Thread-safe.
 */
public final class StreamThreads implements AutoCloseable {

    private record Made(EngineStreamThread thread, EngineGroupMember member) { }

    private final StreamsConfig config;
    private final TopologyMetadata topology;
    private final UUID processId;
    private final String clientId;
    private final StreamsMetadataState metadataState;
    private final Time time;
    /** The stream thread objects of the threads made and not ended, oldest first: {@code KafkaStreams.threads}. */
    private final List<StreamThread> threads = new CopyOnWriteArrayList<>();
    /** By engine thread name; a member leaves once its engine thread took it. */
    private final Map<String, Made> made = new ConcurrentHashMap<>();
    private final Map<String, EngineGroupMember> notJoined = new HashMap<>();
    /** The assignor's admin client (internal topics, offsets), made with the first member. */
    private Admin admin;

    /**
     * @param clientId      the client's id, which the members' client ids start with, as Kafka Streams names them
     * @param metadataState the client's view of the group's hosts, which Kafka Streams' assignor keeps up to date
     */
    public StreamThreads(final StreamsConfig config, final TopologyMetadata topology, final UUID processId,
                         final String clientId, final StreamsMetadataState metadataState, final Time time) {
        this.config = config;
        this.topology = topology;
        this.processId = processId;
        this.clientId = clientId;
        this.metadataState = metadataState;
        this.time = time;
    }

    /** The name of the engine thread numbered {@code index} (from 1), as the engine names its threads. */
    public static String engineThreadName(final StreamsConfig config, final int index) {
        return config.getString(StreamsConfig.APPLICATION_ID_CONFIG) + "-StreamThread-" + index;
    }

    /** Kafka Streams' stream thread objects of the threads made and not ended, oldest first; a live view. */
    public List<StreamThread> list() {
        return threads;
    }

    /** Makes the member and the stream thread object of the engine thread numbered {@code index}, unless made. */
    public synchronized void make(final int index) {
        final String name = engineThreadName(config, index);
        if (made.containsKey(name)) {
            return;
        }
        final EngineGroupMember member = new EngineGroupMember();
        final KafkaStreamsGroupMember groupMember = KafkaStreamsGroupMember.create(config, topology,
            new ProcessId(processId), clientId + "-StreamThread-" + index, index, admin(), metadataState,
            member::taskOffsetSums, member::taskEndOffsetSums, member, time);
        member.use(groupMember);
        final EngineStreamThread thread = EngineStreamThread.create(name, clientId, config, groupMember.consumer(), topology,
            processId, metadataState, time);
        made.put(name, new Made(thread, member));
        notJoined.put(name, member);
        threads.add(thread);
    }

    /**
     * The member of the calling engine thread, numbered {@code index}, made now unless it was, joined to the group
     * under {@code topics} with the engine's member {@code engineMember}.
     */
    synchronized EngineGroupMember join(final int index, final long engineMember, final TaskEnvironment environment,
                                        final String[] topics) {
        make(index);
        final EngineGroupMember member = notJoined.remove(engineThreadName(config, index));
        if (member == null) {
            throw new IllegalStateException("Engine thread " + index + " joined the group twice");
        }
        member.join(engineMember, environment, topics);
        return member;
    }

    /** Engine thread {@code name} is in {@code state} now (a {@link StreamThread.State} name). */
    void follow(final String name, final String state) {
        final Made thread = made.get(name);
        if (thread != null) {
            thread.thread().follow(StreamThread.State.valueOf(state));
        }
    }

    /** The state of engine thread {@code name}, as its stream thread object has it; STARTING before it is made. */
    String state(final String name) {
        final Made thread = made.get(name);
        return thread == null ? StreamThread.State.STARTING.name() : thread.thread().state().name();
    }

    /** Engine thread {@code name} has ended: its stream thread object is DEAD and leaves the list. */
    void ended(final String name) {
        final Made thread;
        synchronized (this) {
            thread = made.remove(name);
            if (thread == null) {
                return;
            }
            threads.remove(thread.thread());
            final EngineGroupMember neverJoined = notJoined.remove(name);
            if (neverJoined != null) {
                neverJoined.leave();
            }
        }
        thread.thread().ended();
    }

    /** The client shuts down: every thread is PENDING_SHUTDOWN, as Kafka Streams' are from the start of a close. */
    public void shuttingDown() {
        made.values().forEach(thread -> thread.thread().follow(StreamThread.State.PENDING_SHUTDOWN));
    }

    /** Every thread has ended with the client: members that never joined are closed, and the assignor's admin. */
    @Override
    public void close() {
        for (final String name : List.copyOf(made.keySet())) {
            ended(name);
        }
        synchronized (this) {
            if (admin != null) {
                Utils.closeQuietly(admin, "the partition assignor's admin client");
                admin = null;
            }
        }
    }

    private Admin admin() {
        if (admin == null) {
            admin = Admin.create(config.getAdminConfigs(ClientUtils.adminClientId(clientId)));
        }
        return admin;
    }
}
