package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import java.util.regex.Pattern;

/**
 * The class paths the build resolved for the suites' JVMs (files written by the module's build),
 * and this harness's own classes. {@code sluiceRuntime} is Sluice's drop-in artifacts and the stores
 * they bring; {@code localCluster} is the stand-in for the integration tests' embedded cluster;
 * {@code integration} is what the integration suite needs besides the baseline (its test jars, the
 * local broker and the broker's own dependencies).
 */
record Classpaths(Path harnessClasses, List<Path> baseline, List<Path> sluiceRuntime, List<Path> localCluster,
                  List<Path> integration) {

    /** The Apache artifacts the Sluice run replaces with {@code sluice-kafka-streams} and its test utils. */
    static final List<String> REPLACED_ARTIFACTS = List.of("kafka-streams", "kafka-streams-test-utils");
    /** Where Sluice's jar carries its native library, one directory per platform, beside this file. */
    private static final String NATIVE_DIRECTORY = "dev/sluice/native/";
    private static final String NATIVE_LIBRARY_PROPERTIES = NATIVE_DIRECTORY + "library.properties";

    static Classpaths load(final Path directory, final Path harnessClasses) {
        final List<Path> baseline = read(directory.resolve("baseline.classpath"));
        final List<Path> sluiceRuntime = read(directory.resolve("sluice-runtime.classpath"));
        final List<Path> localCluster = read(directory.resolve("local-cluster.classpath"));
        final List<Path> integration = new ArrayList<>(read(directory.resolve("integration.classpath")));
        for (final List<Path> elsewhere : List.of(baseline, sluiceRuntime, localCluster)) {
            integration.removeAll(elsewhere);
        }
        return new Classpaths(harnessClasses.toAbsolutePath(), baseline, sluiceRuntime, localCluster,
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

    /**
     * The baseline as a user who swapped the dependency has it: Sluice's drop-in artifacts where
     * Apache's kafka-streams and kafka-streams-test-utils were, the published tests unchanged.
     */
    List<Path> forSluice() {
        final List<Path> replaced = REPLACED_ARTIFACTS.stream().map(this::jarOf).toList();
        final List<Path> classpath = new ArrayList<>(List.of(harnessClasses));
        classpath.addAll(sluiceRuntime);
        baseline.stream().filter(path -> !replaced.contains(path)).forEach(classpath::add);
        return classpath;
    }

    /**
     * These class paths with Sluice's native libraries taken out of the jar that carries them (a copy of it
     * without them, written to {@code directory}), as a platform the jar has no library for sees them.
     */
    Classpaths withoutNativeLibrary(final Path directory) throws IOException {
        final List<Path> stripped = new ArrayList<>();
        for (final Path entry : sluiceRuntime) {
            if (Files.isDirectory(entry) || !contains(entry, NATIVE_LIBRARY_PROPERTIES)) {
                stripped.add(entry);
                continue;
            }
            final Path copy = Files.createDirectories(directory).resolve(entry.getFileName());
            try (JarFile jar = new JarFile(entry.toFile());
                 ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(copy))) {
                for (final JarEntry file : Collections.list(jar.entries())) {
                    if (file.getName().startsWith(NATIVE_DIRECTORY) && file.getName().indexOf('/', NATIVE_DIRECTORY.length()) > 0) {
                        continue;
                    }
                    out.putNextEntry(new ZipEntry(file.getName()));
                    try (InputStream in = jar.getInputStream(file)) {
                        in.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
            stripped.add(copy);
        }
        if (stripped.equals(sluiceRuntime)) {
            throw new IllegalStateException("No jar on Sluice's class path carries " + NATIVE_LIBRARY_PROPERTIES);
        }
        return new Classpaths(harnessClasses, baseline, List.copyOf(stripped), localCluster, integration);
    }

    /** The file name of the class path entry {@code className} is loaded from on {@code classpath}. */
    static String originOf(final String className, final List<Path> classpath) {
        final String entry = className.replace('.', '/') + ".class";
        return classpath.stream().filter(path -> contains(path, entry)).findFirst()
            .map(path -> path.getFileName().toString())
            .orElseThrow(() -> new IllegalStateException(className + " is on no entry of the class path"));
    }

    /** The baseline's jar of the Kafka artifact {@code artifactId} (its runtime jar, not a test jar). */
    Path jarOf(final String artifactId) {
        final Pattern fileName = Pattern.compile(Pattern.quote(artifactId) + "-\\d[^-]*\\.jar");
        return baseline.stream()
            .filter(path -> fileName.matcher(path.getFileName().toString()).matches())
            .findFirst()
            .orElseThrow(() -> new IllegalStateException(artifactId + " is not on the baseline class path"));
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
