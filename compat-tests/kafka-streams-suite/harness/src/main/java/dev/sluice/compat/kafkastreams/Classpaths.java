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
 * and this harness's own classes. {@code localCluster} is the stand-in for the integration tests'
 * embedded cluster; {@code integration} is what the integration suite needs besides the baseline (its
 * test jars, the local broker and the broker's own dependencies).
 */
record Classpaths(Path harnessClasses, List<Path> baseline, List<Path> sluiceStores, List<Path> storeRouting,
                  List<Path> localCluster, List<Path> integration) {

    static Classpaths load(final Path directory, final Path harnessClasses) {
        final List<Path> baseline = read(directory.resolve("baseline.classpath"));
        final List<Path> sluiceStores = read(directory.resolve("sluice-stores.classpath"));
        final List<Path> storeRouting = read(directory.resolve("store-routing.classpath"));
        final List<Path> localCluster = read(directory.resolve("local-cluster.classpath"));
        final List<Path> integration = new ArrayList<>(read(directory.resolve("integration.classpath")));
        for (final List<Path> elsewhere : List.of(baseline, sluiceStores, storeRouting, localCluster)) {
            integration.removeAll(elsewhere);
        }
        return new Classpaths(harnessClasses.toAbsolutePath(), baseline, sluiceStores, storeRouting, localCluster,
            List.copyOf(integration));
    }

    /**
     * A target's class path for the integration suite: the stand-in cluster ahead of the integration
     * test jar that has the original, and the suite's additions after the target's own entries.
     */
    List<Path> forIntegration(final List<Path> target) {
        // target is forBaseline() or forSluice(): the harness's classes, then the target's entries.
        final List<Path> classpath = new ArrayList<>(List.of(harnessClasses));
        classpath.addAll(localCluster);
        classpath.addAll(target.subList(1, target.size()));
        classpath.addAll(integration);
        return classpath;
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
