package dev.sluice.streams.runtime;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.errors.StreamsException;
import org.apache.kafka.streams.processor.internals.StreamsMetadataState;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Feeds Kafka Streams' own {@link StreamsMetadataState} (which answers
 * {@code metadataForAllStreamsClients}, {@code streamsMetadataForStore} and
 * {@code queryMetadataForKey}) with what this instance knows: the input partitions of its local
 * tasks. Sluice's engine runs its own group assignment, which does not exchange
 * {@code application.server} endpoints, so other instances of the application are not known:
 * the metadata lists this instance only.
 *
 * <p>Partition counts come from the brokers (topic descriptions), so that the partition a key
 * maps to is right even when this instance owns only some partitions.
 */
public final class LocalStreamsMetadata {

    private static final Duration DESCRIBE_TIMEOUT = Duration.ofSeconds(30);

    private final StreamsMetadataState metadataState;
    private final HostInfo thisHost;
    private final Admin admin;
    private final Map<String, TopicDescription> describedTopics = new HashMap<>();

    public LocalStreamsMetadata(final StreamsMetadataState metadataState, final HostInfo thisHost, final Admin admin) {
        this.metadataState = metadataState;
        this.thisHost = thisHost;
        this.admin = admin;
    }

    /** Publishes the local tasks' partitions as this host's active partitions. */
    public synchronized void update(final Collection<Set<TopicPartition>> localTaskPartitions) {
        final Set<TopicPartition> active = new HashSet<>();
        localTaskPartitions.forEach(active::addAll);
        final Map<TopicPartition, PartitionInfo> partitionInfos = new HashMap<>();
        for (final TopicDescription description : describe(topicsOf(active)).values()) {
            description.partitions().forEach(p -> partitionInfos.put(
                new TopicPartition(description.name(), p.partition()),
                new PartitionInfo(description.name(), p.partition(), p.leader(),
                    p.replicas().toArray(new Node[0]), p.isr().toArray(new Node[0]))));
        }
        // Kafka Streams publishes no host when application.server is unset; neither does Sluice.
        final Map<HostInfo, Set<TopicPartition>> activeByHost = StreamsMetadataState.UNKNOWN_HOST.equals(thisHost)
            ? Map.of() : Map.of(thisHost, active);
        onChange(activeByHost, partitionInfos);
    }

    private static Set<String> topicsOf(final Set<TopicPartition> partitions) {
        final Set<String> topics = new HashSet<>();
        partitions.forEach(tp -> topics.add(tp.topic()));
        return topics;
    }

    private Map<String, TopicDescription> describe(final Set<String> topics) {
        final Set<String> missing = new HashSet<>(topics);
        missing.removeAll(describedTopics.keySet());
        if (!missing.isEmpty()) {
            try {
                describedTopics.putAll(admin.describeTopics(missing).allTopicNames()
                    .get(DESCRIBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
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
