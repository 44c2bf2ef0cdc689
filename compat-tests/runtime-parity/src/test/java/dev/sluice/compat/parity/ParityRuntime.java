package dev.sluice.compat.parity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.jar.JarFile;
import java.util.regex.Pattern;

/**
 * A runtime an application runs on, as the class path its JVM gets (written by this module's build),
 * and the runtimes the tests hold against Apache's reference run ({@code sluice.parity.runtime}).
 */
enum ParityRuntime {

    /** Apache Kafka Streams 4.4.0 as published: the reference, and, as a candidate, a check of the harness. */
    APACHE("apache.classpath", "Apache Kafka Streams"),
    /** Sluice's drop-in artifact in place of Apache's kafka-streams. */
    SLUICE("sluice.classpath", "Sluice");

    static final String SELECTION_PROPERTY = "sluice.parity.runtime";
    private static final String KAFKA_STREAMS_CLASS = "org/apache/kafka/streams/KafkaStreams.class";
    private static final Pattern APACHE_KAFKA_STREAMS_JAR = Pattern.compile("kafka-streams-\\d.*\\.jar");

    private final String classpathFile;
    private final String description;

    ParityRuntime(final String classpathFile, final String description) {
        this.classpathFile = classpathFile;
        this.description = description;
    }

    String description() {
        return description;
    }

    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The candidates {@code sluice.parity.runtime} selects: {@code apache}, {@code sluice} or {@code both} (the default). */
    static List<ParityRuntime> selected() {
        final String selection = System.getProperty(SELECTION_PROPERTY, "both").trim().toLowerCase(Locale.ROOT);
        return switch (selection) {
            case "apache" -> List.of(APACHE);
            case "sluice" -> List.of(SLUICE);
            case "both" -> List.of(APACHE, SLUICE);
            default -> throw new IllegalArgumentException(SELECTION_PROPERTY + " must be apache, sluice or both, not " + selection);
        };
    }

    /** The class path of this runtime's application JVMs: this module's own applications, then the runtime's. */
    String classpath() {
        final Path file = Path.of(System.getProperty("sluice.parity.classpaths", "target")).resolve(classpathFile);
        try {
            return System.getProperty("sluice.parity.appClasses", Path.of("target", "classes").toString())
                + java.io.File.pathSeparator + Files.readString(file).trim();
        } catch (final IOException e) {
            throw new UncheckedIOException("no class path file " + file + ": build this module with Maven first", e);
        }
    }

    /**
     * Fails, saying why, unless this runtime's class path has exactly one {@code KafkaStreams} and it
     * is this runtime's: on Sluice's, Sluice's own, with Apache's kafka-streams jar nowhere.
     */
    void checkClasspath() {
        final List<Path> entries = Arrays.stream(classpath().split(java.io.File.pathSeparator)).map(Path::of).toList();
        final List<Path> withKafkaStreams = entries.stream().filter(entry -> contains(entry, KAFKA_STREAMS_CLASS)).toList();
        if (this == SLUICE) {
            final List<Path> apacheJars = entries.stream()
                .filter(entry -> APACHE_KAFKA_STREAMS_JAR.matcher(entry.getFileName().toString()).matches()).toList();
            if (!apacheJars.isEmpty()) {
                throw new AssertionError("Apache's kafka-streams is on Sluice's class path: " + apacheJars);
            }
            if (withKafkaStreams.isEmpty()) {
                throw new AssertionError("Sluice's runtime is not there yet: no org.apache.kafka.streams.KafkaStreams on"
                    + " Sluice's class path (dev.sluice:sluice-kafka-streams leaves Apache's out and has none of its own);"
                    + " run with -D" + SELECTION_PROPERTY + "=apache to check the harness against Apache alone");
            }
        }
        if (withKafkaStreams.size() != 1) {
            throw new AssertionError("expected exactly one org.apache.kafka.streams.KafkaStreams on " + description
                + "'s class path, found it in " + withKafkaStreams);
        }
    }

    private static boolean contains(final Path classpathEntry, final String entry) {
        if (Files.isDirectory(classpathEntry)) {
            return Files.exists(classpathEntry.resolve(entry));
        }
        if (!Files.isRegularFile(classpathEntry)) {
            return false;
        }
        try (JarFile jar = new JarFile(classpathEntry.toFile())) {
            return jar.getEntry(entry) != null;
        } catch (final IOException e) {
            throw new UncheckedIOException("cannot read " + classpathEntry, e);
        }
    }
}
