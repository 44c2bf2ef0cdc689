package org.apache.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same word count on Apache Kafka Streams 4.4.0 (in a child JVM, the reference) and on Sluice's
 * runtime: Sluice's {@code KafkaStreams.metrics()} has Apache's thread, task, processor-node, state and
 * client metric names and tags, except the thread metrics of the phases the engine runs in Rust, plus
 * the instance's uncommitted-bytes; JMX shows them under {@code kafka.streams}, and the uncommitted-bytes
 * gauges rise with processing and fall back to 0 at the commit.
 */
class KafkaStreamsMetricsTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final List<String> LINES = List.of("the quick brown fox", "jumps over the lazy dog", "The dog sleeps",
        "a fox and a dog");
    private static final String WORD = "dog";
    private static final long WORD_COUNT = 3;

    /**
     * Kafka Streams' statistics-based RocksDB metrics (RocksDBMetrics' sensors), read from rocksdbjni's
     * {@code Statistics}, which Sluice's stores do not keep; its property-based ones are Sluice's too.
     */
    private static final Set<String> ROCKSDB_STATISTICS_METRICS = Set.of("block-cache-data-hit-ratio",
        "block-cache-filter-hit-ratio", "block-cache-index-hit-ratio", "bytes-read-compaction-rate",
        "bytes-read-rate", "bytes-read-total", "bytes-written-compaction-rate", "bytes-written-rate",
        "bytes-written-total", "compaction-time-avg", "compaction-time-max", "compaction-time-min",
        "memtable-bytes-flushed-rate", "memtable-bytes-flushed-total", "memtable-flush-time-avg",
        "memtable-flush-time-max", "memtable-flush-time-min", "memtable-hit-ratio", "number-file-errors-total",
        "number-open-files", "write-stall-duration-avg", "write-stall-duration-total");

    /**
     * Apache's metrics Sluice does not have (the README's compatibility table lists them): the state
     * updater's time ratios, as the engine thread restores in its own loop; RocksDB's statistics-based ones.
     */
    private static final Predicate<String> NOT_ON_SLUICE = name -> {
        final String[] groupAndName = name.split(" ", 3);
        return switch (groupAndName[0]) {
            case "stream-state-updater-metrics" ->
                Set.of("idle-ratio", "active-restore-ratio", "standby-update-ratio", "checkpoint-ratio")
                    .contains(groupAndName[1]);
            case "stream-state-metrics" -> ROCKSDB_STATISTICS_METRICS.contains(groupAndName[1]);
            default -> false;
        };
    };
    /** Sluice's own: the instance's total of the per-store uncommitted-bytes gauges. */
    private static final String SLUICE_ONLY = "stream-metrics uncommitted-bytes {client-id=*}";

    @TempDir
    Path stateDir;

    @Test
    void metricNamesAndTagsAreKafkaStreamsOnesAndUncommittedBytesFollowCommits() throws Exception {
        final SortedSet<String> apache = apacheMetricNames();
        assertTrue(apache.stream().anyMatch(name -> name.startsWith("stream-thread-metrics process-total ")), apache::toString);

        final String applicationId = "metrics-sluice";
        createTopics(applicationId);
        final MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        try (KafkaStreams streams = new KafkaStreams(
                MetricsWordCountApp.topology(MetricsWordCountApp.inputTopic(applicationId), MetricsWordCountApp.outputTopic(applicationId)),
                MetricsWordCountApp.props(applicationId, BROKER.bootstrapServers(), stateDir.resolve("sluice").toString()))) {
            streams.start();
            produce(MetricsWordCountApp.inputTopic(applicationId));
            // No record cache and a 5 s commit interval: the counts sit uncommitted in the store for a while.
            final ObjectName client = new ObjectName("kafka.streams:type=stream-metrics,client-id=*");
            waitFor(() -> sumOf(jmx, client, "uncommitted-bytes") > 0, "uncommitted bytes in the instance's gauge");
            MetricsWordCountApp.awaitCount(streams, WORD, WORD_COUNT, WAIT);
            final ObjectName stores = new ObjectName("kafka.streams:type=stream-state-metrics,*");
            waitFor(() -> sumOf(jmx, client, "uncommitted-bytes") == 0 && sumOf(jmx, stores, "uncommitted-bytes") == 0,
                "the commit to leave no uncommitted bytes");

            final SortedSet<String> sluice = MetricsWordCountApp.normalisedStreamsMetricNames(streams.metrics(), applicationId);
            final SortedSet<String> expected = new TreeSet<>(apache);
            expected.removeIf(NOT_ON_SLUICE);
            expected.add(SLUICE_ONLY);
            assertEquals(expected, sluice, () -> "missing on Sluice: " + minus(expected, sluice)
                + "\nonly on Sluice: " + minus(sluice, expected));

            // The same metrics through JMX, tagged with the engine threads' names.
            // One MBean per thread, beside the thread-state telemetry gauge's (tagged with the process id too).
            final Set<ObjectName> threads =
                jmx.queryNames(new ObjectName("kafka.streams:type=stream-thread-metrics,thread-id=*"), null);
            assertFalse(threads.isEmpty());
            for (final ObjectName thread : threads) {
                assertTrue(thread.getKeyProperty("thread-id").startsWith("metrics-sluice-StreamThread-"), thread::toString);
            }
            assertTrue(sumOf(jmx, new ObjectName("kafka.streams:type=stream-thread-metrics,*"), "process-total") > 0);
            // The engine's loop turns: polls counted, and the phases' shares of the loop between 0 and 1.
            assertTrue(sumOf(jmx, new ObjectName("kafka.streams:type=stream-thread-metrics,*"), "poll-total") > 0);
            for (final ObjectName thread : threads) {
                final double pollRatio = ((Number) jmx.getAttribute(thread, "poll-ratio")).doubleValue();
                assertTrue(pollRatio > 0.0 && pollRatio <= 1.0, thread + " poll-ratio " + pollRatio);
                // The engine thread waited in its polls; it runs its tasks, as a RUNNING stream thread.
                assertTrue(((Number) jmx.getAttribute(thread, "blocked-time-ns-total")).doubleValue() > 0, thread::toString);
                assertEquals("RUNNING", jmx.getAttribute(thread, "state"));
            }
            assertEquals(KafkaStreams.State.RUNNING.ordinal(), streams.metrics().values().stream()
                .filter(metric -> metric.metricName().name().equals("client-state"))
                .mapToInt(metric -> ((Number) metric.metricValue()).intValue())
                .findFirst().orElseThrow());
            assertTrue(sumOf(jmx, new ObjectName("kafka.streams:type=stream-thread-metrics,*"), "commit-total") > 0);
            assertTrue(sumOf(jmx, new ObjectName("kafka.streams:type=stream-task-metrics,*"), "process-total") > 0);
            assertFalse(jmx.queryNames(new ObjectName("kafka.streams:type=stream-processor-node-metrics,*"), null).isEmpty());
            assertFalse(jmx.queryNames(new ObjectName("kafka.streams:type=stream-state-metrics,*"), null).isEmpty());
        }
        assertTrue(ManagementFactory.getPlatformMBeanServer()
            .queryNames(new ObjectName("kafka.streams:type=stream-thread-metrics,*"), null).isEmpty(),
            "a closed client leaves no thread metrics behind");
    }

    /** The word count's metric names on Apache's runtime: its jar ahead of Sluice's classes on a child JVM's class path. */
    private SortedSet<String> apacheMetricNames() throws Exception {
        final String apacheJar = System.getProperty("sluice.reference.kafka.streams.jar");
        assertNotNull(apacheJar, "sluice.reference.kafka.streams.jar is not set (the build sets it)");
        final String applicationId = "metrics-apache";
        createTopics(applicationId);
        produce(MetricsWordCountApp.inputTopic(applicationId));
        final ChildJvm child = ChildJvm.start(stateDir.resolve("apache.log"),
            apacheJar + File.pathSeparator + System.getProperty("java.class.path"),
            MetricsWordCountApp.class.getName(),
            List.of(BROKER.bootstrapServers(), applicationId, stateDir.resolve("apache").toString(), WORD,
                Long.toString(WORD_COUNT)));
        try {
            assertTrue(child.awaitOutput(lines -> lines.contains(MetricsWordCountApp.DONE_LINE), WAIT),
                () -> "Apache's run did not finish:\n" + child.tail(40));
            return child.lines().stream()
                .filter(line -> line.startsWith(MetricsWordCountApp.METRIC_LINE))
                .map(line -> line.substring(MetricsWordCountApp.METRIC_LINE.length()))
                .collect(Collectors.toCollection(TreeSet::new));
        } finally {
            child.stop();
        }
    }

    private static double sumOf(final MBeanServer jmx, final ObjectName pattern, final String attribute) {
        double sum = 0;
        for (final ObjectName name : jmx.queryNames(pattern, null)) {
            try {
                final Object value = jmx.getAttribute(name, attribute);
                if (value instanceof Number number) {
                    sum += number.doubleValue();
                }
            } catch (final javax.management.AttributeNotFoundException notThisOne) {
                // Another metric of the group: no such attribute on it.
            } catch (final javax.management.JMException e) {
                throw new AssertionError("could not read " + attribute + " of " + name, e);
            }
        }
        return sum;
    }

    private static SortedSet<String> minus(final Set<String> from, final Set<String> without) {
        final SortedSet<String> rest = new TreeSet<>(from);
        rest.removeAll(without);
        return rest;
    }

    private static void createTopics(final String applicationId) {
        BROKER.createTopic(MetricsWordCountApp.inputTopic(applicationId), 2);
        BROKER.createTopic(MetricsWordCountApp.outputTopic(applicationId), 2);
    }

    private static void produce(final String topic) throws Exception {
        final java.util.Properties config = new java.util.Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            int i = 0;
            for (final String line : LINES) {
                producer.send(new ProducerRecord<>(topic, "k" + i++, line)).get();
            }
        }
    }

    private static void waitFor(final java.util.function.BooleanSupplier condition, final String what)
        throws InterruptedException {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }
}
