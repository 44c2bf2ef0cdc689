package dev.sluice.streams.runtime;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.state.HostInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds Kafka Streams' own {@link StreamsMetadataState} (which answers {@code metadataForAllStreamsClients},
 * {@code streamsMetadataForStore} and {@code queryMetadataForKey}) with the active partitions of every
 * instance of the application that has an {@code application.server} endpoint.
 *
 * <p>Each instance with an endpoint publishes it with the group member ids of its engine threads
 * ({@link ApplicationInstances}); the group, as the admin client describes it, tells which member owns
 * which partitions. A member whose instance is not known (yet) is left out, as Kafka Streams leaves out
 * hosts without an endpoint. The view is computed again after a rebalance of this instance
 * ({@link #markStale}) and, while some member is unknown or the group is rebalancing, at most every
 * {@value #INCOMPLETE_RETRY_MS} ms.
 *
 * <p>Without {@code application.server} nothing is published and the metadata is empty, as in Kafka Streams.
 */
public final class GroupStreamsMetadata {

    private static final Logger LOG = LoggerFactory.getLogger(GroupStreamsMetadata.class);
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long INCOMPLETE_RETRY_MS = 200;

    private final StreamsMetadataState metadataState;
    private final HostInfo thisHost;
    private final Admin admin;
    private final ApplicationInstances instances;
    private final String groupId;
    private final Time time;
    private final Map<String, TopicDescription> describedTopics = new HashMap<>();
    /** This instance's engine threads, by name, with their group member ids; written on engine threads. */
    private final Map<String, String> localMembers = new ConcurrentHashMap<>();
    private volatile boolean stale = true;
    private boolean complete;
    private long computedMs;

    public GroupStreamsMetadata(final StreamsMetadataState metadataState,
                                final HostInfo thisHost,
                                final Admin admin,
                                final ApplicationInstances instances,
                                final String groupId,
                                final Time time) {
        this.metadataState = metadataState;
        this.thisHost = thisHost;
        this.admin = admin;
        this.instances = instances;
        this.groupId = groupId;
        this.time = time;
    }

    private boolean hasEndpoint() {
        return !StreamsMetadataState.UNKNOWN_HOST.equals(thisHost);
    }

    /**
     * Engine thread {@code thread} is group member {@code memberId} since its last rebalance. Called on
     * the engine thread, in its rebalance: publishes without waiting, and never waits for a refresh.
     */
    public void memberJoined(final String thread, final String memberId) {
        stale = true;
        synchronized (localMembers) {
            if (memberId.isEmpty() || memberId.equals(localMembers.put(thread, memberId)) || !hasEndpoint()) {
                return;
            }
            // The record names the current member ids only; the group tells which of them own partitions.
            instances.publishEndpoint(new ApplicationInstances.Endpoint(thisHost, Set.copyOf(localMembers.values())));
        }
    }

    /** The group may have changed: the next {@link #refresh} describes it again. */
    public void markStale() {
        stale = true;
    }

    /** Brings the metadata up to date with the group, if it may have changed since it was last computed. */
    public synchronized void refresh() {
        if (!hasEndpoint()) {
            // Kafka Streams publishes no host when application.server is unset; neither does Sluice.
            onChange(Map.of(), Map.of());
            return;
        }
        final long nowMs = time.milliseconds();
        if (!stale && (complete || nowMs - computedMs < INCOMPLETE_RETRY_MS)) {
            return;
        }
        stale = false;
        computedMs = nowMs;
        final Map<String, HostInfo> hostOfMember = new HashMap<>();
        final Optional<ConsumerGroupDescription> group;
        try {
            instances.endpoints().values().forEach(instance ->
                instance.memberIds().forEach(id -> hostOfMember.put(id, instance.host())));
            group = describeGroup();
        } catch (final StreamsException e) {
            // As a stream thread whose rebalance has not completed: the last metadata stands until it does.
            LOG.warn("Could not bring the streams metadata up to date; it stays as it was", e);
            stale = true;
            return;
        }
        localMembers.values().forEach(id -> hostOfMember.put(id, thisHost));
        complete = group.isPresent() && group.get().groupState() == GroupState.STABLE;
        final Map<HostInfo, Set<TopicPartition>> activeByHost = new HashMap<>();
        final Set<TopicPartition> assigned = new HashSet<>();
        for (final MemberDescription member : group.map(ConsumerGroupDescription::members).orElse(List.of())) {
            final HostInfo host = hostOfMember.get(member.consumerId());
            if (host == null) {
                complete = false;
                continue;
            }
            final Set<TopicPartition> partitions = member.assignment().topicPartitions();
            activeByHost.computeIfAbsent(host, h -> new HashSet<>()).addAll(partitions);
            assigned.addAll(partitions);
        }
        onChange(activeByHost, partitionInfos(assigned));
    }

    /** The application's group; empty before its first member joined. */
    private Optional<ConsumerGroupDescription> describeGroup() {
        try {
            return Optional.of(admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId)
                .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
        } catch (final ExecutionException e) {
            if (e.getCause() instanceof GroupIdNotFoundException) {
                return Optional.empty();
            }
            throw new StreamsException("Could not describe group " + groupId + " for the streams metadata", e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StreamsException("Interrupted while describing group " + groupId, e);
        } catch (final TimeoutException e) {
            throw new StreamsException("Could not describe group " + groupId + " for the streams metadata", e);
        }
    }

    /** Partition counts come from the brokers, so that a key maps to the right partition wherever it is owned. */
    private Map<TopicPartition, PartitionInfo> partitionInfos(final Set<TopicPartition> partitions) {
        final Set<String> topics = new HashSet<>();
        partitions.forEach(tp -> topics.add(tp.topic()));
        final Map<TopicPartition, PartitionInfo> partitionInfos = new HashMap<>();
        for (final TopicDescription description : describe(topics).values()) {
            description.partitions().forEach(p -> partitionInfos.put(
                new TopicPartition(description.name(), p.partition()),
                new PartitionInfo(description.name(), p.partition(), p.leader(),
                    p.replicas().toArray(new Node[0]), p.isr().toArray(new Node[0]))));
        }
        return partitionInfos;
    }

    private Map<String, TopicDescription> describe(final Set<String> topics) {
        final Set<String> missing = new HashSet<>(topics);
        missing.removeAll(describedTopics.keySet());
        if (!missing.isEmpty()) {
            try {
                describedTopics.putAll(admin.describeTopics(missing).allTopicNames()
                    .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StreamsException("Interrupted while describing topics " + missing, e);
            } catch (final ExecutionException | TimeoutException e) {
                throw new StreamsException("Could not describe topics " + missing + " for the streams metadata", e);
            }
        }
        final Map<String, TopicDescription> result = new HashMap<>();
        topics.forEach(t -> result.put(t, describedTopics.get(t)));
        return result;
    }

    /**
     * {@code StreamsMetadataState.onChange} is package-private: in Kafka Streams only its partition
     * assignor calls it. Sluice has no such assignor on the JVM, so it calls the method reflectively
     * (same class loader, unnamed module: no access check stands in the way).
     */
    private void onChange(final Map<HostInfo, Set<TopicPartition>> activeByHost,
                          final Map<TopicPartition, PartitionInfo> partitionInfos) {
        try {
            final Method onChange = StreamsMetadataState.class.getDeclaredMethod("onChange", Map.class, Map.class, Map.class);
            onChange.setAccessible(true);
            onChange.invoke(metadataState, activeByHost, Map.of(), partitionInfos);
        } catch (final InvocationTargetException e) {
            throw new StreamsException("Could not update the streams metadata", e.getCause());
        } catch (final ReflectiveOperationException e) {
            throw new IllegalStateException("Kafka Streams' StreamsMetadataState.onChange is not as expected", e);
        }
    }
}
