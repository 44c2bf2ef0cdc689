package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarFile;

/**
 * The class paths the build resolved for the suites' JVMs (files written by the module's build),
 * and this harness's own classes.
 */
record Classpaths(Path harnessClasses, List<Path> baseline, List<Path> sluiceStores, List<Path> storeRouting) {

    static Classpaths load(final Path directory, final Path harnessClasses) {
        return new Classpaths(harnessClasses.toAbsolutePath(), read(directory.resolve("baseline.classpath")),
            read(directory.resolve("sluice-stores.classpath")), read(directory.resolve("store-routing.classpath")));
    }

    /** Apache Kafka Streams as published, with the published tests. */
    List<Path> forBaseline() {
        final List<Path> classpath = new ArrayList<>(List.of(harnessClasses));
        classpath.addAll(baseline);
        return classpath;
    }

    /** The baseline with Sluice's stores, and the store routing ahead of kafka-streams. */
    List<Path> forSluice() {
        final List<Path> classpath = new ArrayList<>(List.of(harnessClasses));
        classpath.addAll(storeRouting);
        classpath.addAll(sluiceStores);
        classpath.addAll(baseline);
        return classpath;
    }

    /** Whether sluice-stores has the DSL store suppliers the Sluice run routes stores to. */
    boolean sluiceHasDslStoreSuppliers(final String className) {
        final String entry = className.replace('.', '/') + ".class";
        return sluiceStores.stream().anyMatch(path -> contains(path, entry));
    }

    Path jarOf(final String fileNamePrefix) {
        return baseline.stream()
            .filter(path -> path.getFileName().toString().startsWith(fileNamePrefix))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException(fileNamePrefix + "* is not on the baseline class path"));
    }

    private static boolean contains(final Path classpathEntry, final String entry) {
        if (Files.isDirectory(classpathEntry)) {
            return Files.exists(classpathEntry.resolve(entry));
        }
        try (JarFile jar = new JarFile(classpathEntry.toFile())) {
            return jar.getEntry(entry) != null;
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Path> read(final Path file) {
        try {
            final String content = Files.readString(file).strip();
            return content.isEmpty() ? List.of()
                : Arrays.stream(content.split(java.io.File.pathSeparator)).map(Path::of).toList();
        } catch (final IOException e) {
            throw new UncheckedIOException("Missing " + file + "; build the module with Maven first", e);
        }
    }
}
