package dev.sluice.bench.apps;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.streams.StreamsConfig;

/** A runtime the applications are timed on: a class path this module's build writes, and the configs it adds. */
enum Variant {

    APACHE("apache", "Apache KS 4.4", "apache.classpath", Map.of()),
    /** Apache's runtime with its KIP-892 stores, which Sluice's are always; it changes only exactly-once runs. */
    APACHE_TRANSACTIONAL_STORES("apache-txn", "Apache KS 4.4, transactional stores", "apache.classpath",
        Map.of(StreamsConfig.TRANSACTIONAL_STATE_STORES_CONFIG, "true")),
    SLUICE("sluice", "Sluice", "sluice.classpath", Map.of());

    private final String id;
    private final String description;
    private final String classpathFile;
    private final Map<String, String> configs;

    Variant(final String id, final String description, final String classpathFile, final Map<String, String> configs) {
        this.id = id;
        this.description = description;
        this.classpathFile = classpathFile;
        this.configs = configs;
    }

    String id() {
        return id;
    }

    String description() {
        return description;
    }

    Map<String, String> configs() {
        return configs;
    }

    boolean isApache() {
        return this != SLUICE;
    }

    /** Transactional stores differ from Apache's default only under exactly-once. */
    boolean appliesTo(final String processingGuarantee) {
        return this != APACHE_TRANSACTIONAL_STORES || StreamsConfig.EXACTLY_ONCE_V2.equals(processingGuarantee);
    }

    String classpath(final Path classpathDir) {
        final Path file = classpathDir.resolve(classpathFile);
        try {
            return Files.readString(file).trim();
        } catch (final IOException e) {
            throw new UncheckedIOException("no class path file " + file + ": build this module with Maven first", e);
        }
    }
}
