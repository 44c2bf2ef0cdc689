package org.apache.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.compat.childjvm.ChildJvm;
import dev.sluice.streams.internals.NativeLibrary;
import dev.sluice.streams.runtime.internals.RuntimeChoice;
import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application run where Sluice's native library cannot be used, or where the operator chose Apache's runtime
 * ({@code -Dsluice.runtime=apache}), runs unchanged on Apache Kafka Streams' own runtime and stores: explicit
 * and DSL store suppliers are Apache's, a {@link TopologyTestDriver} word count and a {@link KafkaStreams} one
 * against a broker count right, and Sluice's native library is never loaded. The same application with neither
 * shows the checks tell the runtimes apart. Each runs in a JVM of its own, since the choice is made once per JVM.
 * An application that supplies its own Kafka clients runs on Apache's runtime whatever the JVM's choice, since only
 * that runtime can use them.
 */
class ApacheRuntimeFallbackTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    private static final Duration WAIT = Duration.ofSeconds(150);
    private static final String LINES = "the quick brown fox|jumps over the lazy dog|The dog sleeps|a fox and a dog";
    private static final String WORD = "dog";
    private static final long WORD_COUNT = 3;
    private static final String APACHE_SUPPLIER = "org.apache.kafka.streams.state.internals.RocksDBKeyValueBytesStoreSupplier";

    @TempDir
    Path workDir;

    @Test
    void anOperatorMovesAnInstanceToApachesRuntimeWithASystemProperty() throws Exception {
        final Map<String, String> found = run("fallback-by-switch", List.of("-Dsluice.runtime=apache",
            "-Dorg.slf4j.simpleLogger.log." + RuntimeChoice.class.getName() + "=info"), System.getProperty("java.class.path"));
        assertRanOnApache(found);
        assertTrue(found.get("log").contains("sluice.runtime=apache: Kafka Streams applications in this JVM run on "
            + "Apache Kafka Streams' own runtime"), found.get("log"));
    }

    @Test
    void aPlatformWithoutTheNativeLibraryRunsOnApachesRuntimeWithOneWarning() throws Exception {
        final Map<String, String> found = run("fallback-by-platform", List.of(), classPathWithoutNativeLibrary());
        assertRanOnApache(found);
        final String warning = "Sluice has no native library for this platform (" + NativeLibrary.currentPlatform();
        assertEquals(1, found.get("log").lines().filter(line -> line.contains(warning)).count(), found.get("log"));
    }

    @Test
    void withTheNativeLibraryAndNoChoiceTheApplicationRunsOnSluice() throws Exception {
        final Map<String, String> found = run("sluice-by-default", List.of(), System.getProperty("java.class.path"));
        assertTrue(found.get(ApacheRuntimeFallbackApp.SUPPLIER_LINE + "stores ").startsWith("dev.sluice."), found.toString());
        assertTrue(found.get(ApacheRuntimeFallbackApp.SUPPLIER_LINE + "dsl ").startsWith("dev.sluice."), found.toString());
        assertEquals(Long.toString(WORD_COUNT), found.get(ApacheRuntimeFallbackApp.COUNT_LINE), found.toString());
        assertEquals("true", found.get(ApacheRuntimeFallbackApp.CLOSED_LINE), found.toString());
        assertFollowedState(found);
        assertEquals("true", found.get(ApacheRuntimeFallbackApp.NATIVE_LINE), found.toString());
    }

    /** A supplier's clients are never bypassed: with one, the client runs on Apache's runtime, which asks it for each. */
    @Test
    void anApplicationsOwnKafkaClientsAreUsed() throws Exception {
        final String applicationId = "supplied-clients";
        BROKER.createTopic(applicationId + "-input", 2);
        BROKER.createTopic(applicationId + "-output", 2);
        produce(applicationId + "-input");
        final CountingClientSupplier supplier = new CountingClientSupplier();
        try (KafkaStreams streams = new KafkaStreams(
                MetricsWordCountApp.topology(applicationId + "-input", applicationId + "-output"),
                MetricsWordCountApp.props(applicationId, BROKER.bootstrapServers(), workDir.resolve(applicationId).toString()),
                supplier)) {
            streams.start();
            final long deadline = System.nanoTime() + WAIT.toNanos();
            Long count = null;
            while (System.nanoTime() < deadline && !Long.valueOf(WORD_COUNT).equals(count)) {
                Thread.sleep(100);
                if (streams.state() == KafkaStreams.State.RUNNING) {
                    count = streams.store(StoreQueryParameters.fromNameAndType(MetricsWordCountApp.COUNTS,
                        QueryableStoreTypes.<String, Long>keyValueStore())).get(WORD);
                }
            }
            assertEquals(WORD_COUNT, count);
        }
        assertEquals(Map.of("admin", 1, "consumer", 1, "producer", 1, "restore consumer", 1), supplier.asked);
    }

    /** Kafka's own clients, counted by kind as they are asked for. */
    private static final class CountingClientSupplier extends DefaultKafkaClientSupplier {
        final Map<String, Integer> asked = new ConcurrentHashMap<>();

        @Override
        public Admin getAdmin(final Map<String, Object> config) {
            asked.merge("admin", 1, Integer::sum);
            return super.getAdmin(config);
        }

        @Override
        public Producer<byte[], byte[]> getProducer(final Map<String, Object> config) {
            asked.merge("producer", 1, Integer::sum);
            return super.getProducer(config);
        }

        @Override
        public Consumer<byte[], byte[]> getConsumer(final Map<String, Object> config) {
            asked.merge("consumer", 1, Integer::sum);
            return super.getConsumer(config);
        }

        @Override
        public Consumer<byte[], byte[]> getRestoreConsumer(final Map<String, Object> config) {
            asked.merge("restore consumer", 1, Integer::sum);
            return super.getRestoreConsumer(config);
        }

        @Override
        public Consumer<byte[], byte[]> getGlobalConsumer(final Map<String, Object> config) {
            asked.merge("global consumer", 1, Integer::sum);
            return super.getGlobalConsumer(config);
        }
    }

    /**
     * A subclass reads the protected state, the application's listener hears it, and the listener is in the
     * field Kafka Streams keeps it in, on either runtime.
     */
    private static void assertFollowedState(final Map<String, String> found) {
        assertEquals("RUNNING", found.get(ApacheRuntimeFallbackApp.SUBCLASS_STATE_LINE + "running "), found.toString());
        assertEquals("NOT_RUNNING", found.get(ApacheRuntimeFallbackApp.SUBCLASS_STATE_LINE + "closed "), found.toString());
        assertEquals("NOT_RUNNING", found.get(ApacheRuntimeFallbackApp.LISTENER_STATE_LINE + "closed "), found.toString());
        assertEquals("true", found.get(ApacheRuntimeFallbackApp.LISTENER_FIELD_LINE), found.toString());
    }

    private static void assertRanOnApache(final Map<String, String> found) {
        assertEquals(APACHE_SUPPLIER, found.get(ApacheRuntimeFallbackApp.SUPPLIER_LINE + "stores "), found.toString());
        assertEquals(APACHE_SUPPLIER, found.get(ApacheRuntimeFallbackApp.SUPPLIER_LINE + "dsl "), found.toString());
        assertEquals(Long.toString(WORD_COUNT), found.get(ApacheRuntimeFallbackApp.DRIVER_COUNT_LINE), found.toString());
        assertEquals(Long.toString(WORD_COUNT), found.get(ApacheRuntimeFallbackApp.COUNT_LINE), found.toString());
        assertEquals("true", found.get(ApacheRuntimeFallbackApp.CLOSED_LINE), found.toString());
        assertFollowedState(found);
        assertEquals("false", found.get(ApacheRuntimeFallbackApp.NATIVE_LINE), found.toString());
        // Apache's client, renamed inside the jar, logs under Kafka Streams' name, which the logging configuration names.
        assertTrue(found.get("log").contains(KafkaStreams.class.getName() + " - stream-client ["), found.get("log"));
        assertTrue(found.get("log").lines().noneMatch(line -> line.contains("ApacheKafkaStreams")), found.get("log"));
    }

    /** The child's findings by line prefix (a supplier line's by prefix and kind), and its whole log under "log". */
    private Map<String, String> run(final String applicationId, final List<String> jvmOptions, final String classPath)
        throws Exception {
        BROKER.createTopic(applicationId + "-input", 2);
        BROKER.createTopic(applicationId + "-output", 2);
        produce(applicationId + "-input");
        final List<String> options = new ArrayList<>(ChildJvm.SHORT_LIVED);
        // A logging configuration that names Kafka Streams' client, as an application's would.
        options.add("-Dorg.slf4j.simpleLogger.log." + KafkaStreams.class.getName() + "=info");
        options.addAll(jvmOptions);
        final ChildJvm child = ChildJvm.start(workDir.resolve(applicationId + ".log"), options, classPath,
            ApacheRuntimeFallbackApp.class.getName(), List.of(BROKER.bootstrapServers(), applicationId,
                workDir.resolve(applicationId).toString(), LINES, WORD, Long.toString(WORD_COUNT)));
        try {
            assertTrue(child.awaitOutput(lines -> lines.contains(ApacheRuntimeFallbackApp.DONE_LINE), WAIT),
                () -> "the application did not finish:\n" + child.tail(60));
            final Map<String, String> found = child.lines().stream()
                .filter(line -> Stream.of(ApacheRuntimeFallbackApp.DRIVER_COUNT_LINE, ApacheRuntimeFallbackApp.COUNT_LINE,
                    ApacheRuntimeFallbackApp.CLOSED_LINE, ApacheRuntimeFallbackApp.NATIVE_LINE,
                    ApacheRuntimeFallbackApp.SUPPLIER_LINE, ApacheRuntimeFallbackApp.SUBCLASS_STATE_LINE,
                    ApacheRuntimeFallbackApp.LISTENER_STATE_LINE, ApacheRuntimeFallbackApp.LISTENER_FIELD_LINE)
                    .anyMatch(line::startsWith))
                .collect(Collectors.toMap(ApacheRuntimeFallbackTest::findingKey, line -> line.substring(line.lastIndexOf(' ') + 1)));
            found.put("log", String.join(System.lineSeparator(), child.lines()));
            return found;
        } finally {
            child.stop();
        }
    }

    /** A finding's line up to its value: {@code "COUNT "}, or {@code "SUPPLIER stores "} for a supplier line (so for a state line). */
    private static String findingKey(final String line) {
        return line.substring(0, line.lastIndexOf(' ') + 1);
    }

    private static void produce(final String topic) throws Exception {
        final Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, BROKER.bootstrapServers());
        try (KafkaProducer<String, String> producer =
                 new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            for (final String line : LINES.split("\\|")) {
                producer.send(new ProducerRecord<>(topic, line, line)).get();
            }
        }
    }

    /**
     * This JVM's class path with Sluice's native library for this platform taken out of the entry that carries it
     * (a copy of that directory or jar without it), as on a platform the jar has no library for.
     */
    private String classPathWithoutNativeLibrary() {
        final String platformDirectory = "dev/sluice/native/" + NativeLibrary.currentPlatform();
        final List<String> entries = new ArrayList<>();
        boolean removed = false;
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            final Path path = Path.of(entry);
            try (FileSystem jar = Files.isRegularFile(path) && entry.endsWith(".jar")
                    ? FileSystems.newFileSystem(URI.create("jar:" + path.toUri()), Map.of()) : null) {
                final Path root = jar == null ? path : jar.getPath("/");
                if (!Files.isDirectory(root.resolve(platformDirectory))) {
                    entries.add(entry);
                    continue;
                }
                final Path copy = workDir.resolve("without-native-library-" + entries.size());
                try (Stream<Path> files = Files.walk(root)) {
                    for (final Path file : (Iterable<Path>) files::iterator) {
                        final String relative = root.relativize(file).toString();
                        if (!relative.startsWith(platformDirectory) && Files.isRegularFile(file)) {
                            Files.createDirectories(copy.resolve(relative).getParent());
                            Files.copy(file, copy.resolve(relative));
                        }
                    }
                }
                entries.add(copy.toString());
                removed = true;
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        assertTrue(removed, "no class path entry carries " + platformDirectory);
        return String.join(File.pathSeparator, entries);
    }
}
