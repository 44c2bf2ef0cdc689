package dev.sluice.compat.parity;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The internal topics an application created (repartition topics and changelogs, named after its
 * application id), each as its name without the application id, its partition and replica counts, and
 * the configs set on it when it was created. Two runtimes that make Kafka Streams' internal topics
 * make the same ones.
 */
record InternalTopics(Map<String, String> shapes) {

    /** The internal topics of {@code applicationId}, leaving out the harness's own {@code outputTopic}. */
    static InternalTopics of(final Admin admin, final String applicationId, final String outputTopic) {
        final String prefix = applicationId + "-";
        try {
            final Set<String> names = admin.listTopics().names().get().stream()
                .filter(name -> name.startsWith(prefix) && !name.equals(outputTopic))
                .collect(Collectors.toCollection(TreeSet::new));
            final Map<String, TopicDescription> descriptions = admin.describeTopics(names).allTopicNames().get();
            final List<ConfigResource> resources = names.stream()
                .map(name -> new ConfigResource(ConfigResource.Type.TOPIC, name)).toList();
            final Map<ConfigResource, Config> configs = admin.describeConfigs(resources).all().get();
            final Map<String, String> shapes = new TreeMap<>();
            for (final String name : names) {
                final TopicDescription description = descriptions.get(name);
                shapes.put(name.substring(prefix.length()), "partitions=" + description.partitions().size()
                    + " replicas=" + description.partitions().get(0).replicas().size()
                    + setAtCreation(configs.get(new ConfigResource(ConfigResource.Type.TOPIC, name)).entries()));
            }
            return new InternalTopics(shapes);
        } catch (final ExecutionException e) {
            throw new AssertionError("could not describe the internal topics of " + applicationId + ": " + e.getCause(), e);
        } catch (final InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Empty when both have the same topics alike; otherwise each topic that differs, for an assertion message. */
    Optional<String> differenceFrom(final InternalTopics reference) {
        final Set<String> names = new TreeSet<>(reference.shapes.keySet());
        names.addAll(shapes.keySet());
        final String differences = names.stream()
            .filter(name -> !String.valueOf(reference.shapes.get(name)).equals(String.valueOf(shapes.get(name))))
            .map(name -> "  " + name + ": reference " + describe(reference.shapes.get(name)) + ", candidate "
                + describe(shapes.get(name)))
            .collect(Collectors.joining(System.lineSeparator()));
        return differences.isEmpty() ? Optional.empty() : Optional.of(differences);
    }

    private static String setAtCreation(final Collection<ConfigEntry> entries) {
        return entries.stream().filter(entry -> entry.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
            .map(entry -> " " + entry.name() + "=" + entry.value()).sorted().collect(Collectors.joining());
    }

    private static String describe(final String shape) {
        return shape == null ? "(none)" : "(" + shape + ")";
    }
}
