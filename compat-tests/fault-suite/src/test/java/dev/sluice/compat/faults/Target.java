package dev.sluice.compat.faults;

import dev.sluice.streams.state.SluiceDslStoreSuppliers;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.streams.StreamsConfig;

/** Which Kafka Streams runs the application, and whose stores its aggregations use. */
enum Target {

    SLUICE_RUNTIME("Sluice's runtime and stores") {
        @Override
        void configure(final Properties props) {
            // The drop-in's built-in stores are Sluice's already.
        }

        @Override
        String classPath() {
            // The application's classes on Sluice's drop-in artifact in place of Apache's kafka-streams.
            return Path.of("target", "test-classes").toAbsolutePath() + File.pathSeparator + readClassPath("sluice.classpath");
        }
    },
    SLUICE_STORES("Apache Kafka Streams' runtime, Sluice's stores") {
        @Override
        void configure(final Properties props) {
            props.put(StreamsConfig.DSL_STORE_SUPPLIERS_CLASS_CONFIG, SluiceDslStoreSuppliers.class);
        }
    },
    APACHE("Apache Kafka Streams' runtime and stores") {
        @Override
        void configure(final Properties props) {
        }
    };

    private final String description;

    Target(final String description) {
        this.description = description;
    }

    abstract void configure(Properties props);

    /** The child JVM's class path: by default the test's own, which holds Apache's kafka-streams. */
    String classPath() {
        return System.getProperty("java.class.path");
    }

    String description() {
        return description;
    }

    private static String readClassPath(final String file) {
        try {
            return Files.readString(Path.of("target", file)).trim();
        } catch (final IOException e) {
            throw new UncheckedIOException("the build writes target/" + file, e);
        }
    }
}
