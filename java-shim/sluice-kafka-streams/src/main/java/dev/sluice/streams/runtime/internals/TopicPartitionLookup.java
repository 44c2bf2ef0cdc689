package dev.sluice.streams.runtime.internals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsException;

/**
 * The partitions of a topic, for the tasks that choose a record's partition themselves (a
 * {@code StreamPartitioner} asks how many there are). The engine's producer knows them, but it lives on
 * the other side of the boundary; an admin client of the application's own config asks the cluster once
 * per topic, and only when a task needs it.
 */
final class TopicPartitionLookup implements Function<String, List<PartitionInfo>>, AutoCloseable {

    private final StreamsConfig config;
    private final Map<String, List<PartitionInfo>> partitions = new ConcurrentHashMap<>();
    private Admin admin;
    private boolean closed;

    TopicPartitionLookup(final StreamsConfig config) {
        this.config = config;
    }

    @Override
    public List<PartitionInfo> apply(final String topic) {
        return partitions.computeIfAbsent(topic, this::describe);
    }

    private List<PartitionInfo> describe(final String topic) {
        try {
            final TopicDescription description = admin().describeTopics(Set.of(topic)).allTopicNames().get().get(topic);
            final List<PartitionInfo> infos = new ArrayList<>();
            for (final TopicPartitionInfo partition : description.partitions()) {
                infos.add(new PartitionInfo(topic, partition.partition(), partition.leader(),
                    partition.replicas().toArray(new Node[0]),
                    partition.isr().toArray(new Node[0])));
            }
            return List.copyOf(infos);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        } catch (final ExecutionException e) {
            throw new StreamsException("Could not find the partitions of topic " + topic, e.getCause());
        }
    }

    /** The names of the cluster's topics, internal ones left out; asked of the cluster on every call. */
    Set<String> topicNames() {
        try {
            return admin().listTopics().names().get();
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptException(e);
        } catch (final ExecutionException e) {
            throw new StreamsException("Could not list the cluster's topics", e.getCause());
        }
    }

    private synchronized Admin admin() {
        if (closed) {
            throw new IllegalStateException("The application is closed");
        }
        if (admin == null) {
            admin = Admin.create(config.getAdminConfigs(config.getString(StreamsConfig.APPLICATION_ID_CONFIG) + "-partition-lookup"));
        }
        return admin;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (admin != null) {
            admin.close();
        }
    }
}
