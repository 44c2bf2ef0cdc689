package dev.sluice.compat.dropin;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** The classes of a class path (jars and class directories), and the ones that more than one entry holds. */
final class ClassPathScan {

    /** A class in a multi-release jar's version directory is the same class as at the jar's root. */
    private static final Pattern VERSIONED = Pattern.compile("META-INF/versions/\\d+/(.+)");

    private static final Pattern APACHE_KAFKA_STREAMS_JAR = Pattern.compile("kafka-streams(-test-utils)?-\\d.*\\.jar");

    private ClassPathScan() {
    }

    /** Class file name to every class path entry that holds it, for the classes held more than once. */
    static Map<String, List<Path>> duplicateClasses(final List<Path> classPath) {
        final Map<String, List<Path>> holders = new TreeMap<>();
        for (final Path entry : classPath) {
            for (final String className : classesOf(entry)) {
                holders.computeIfAbsent(className, name -> new ArrayList<>()).add(entry);
            }
        }
        holders.values().removeIf(entries -> entries.size() < 2);
        return holders;
    }

    /** The jars of Apache's kafka-streams or kafka-streams-test-utils on a class path, by their file names. */
    static List<Path> apacheKafkaStreamsJars(final List<Path> classPath) {
        return classPath.stream()
            .filter(entry -> APACHE_KAFKA_STREAMS_JAR.matcher(entry.getFileName().toString()).matches())
            .toList();
    }

    /** The class files of one class path entry; module descriptors are not classes a class path shares. */
    static Set<String> classesOf(final Path entry) {
        if (Files.isDirectory(entry)) {
            try (Stream<Path> files = Files.walk(entry)) {
                return files.filter(Files::isRegularFile)
                    .map(file -> entry.relativize(file).toString().replace(File.separatorChar, '/'))
                    .map(ClassPathScan::className)
                    .filter(ClassPathScan::isClass)
                    .collect(Collectors.toCollection(LinkedHashSet::new));
            } catch (final IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        try (JarFile jar = new JarFile(entry.toFile())) {
            final Set<String> classes = new LinkedHashSet<>();
            for (final Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
                final String name = className(entries.nextElement().getName());
                if (isClass(name)) {
                    classes.add(name);
                }
            }
            return classes;
        } catch (final IOException e) {
            throw new UncheckedIOException("Cannot read class path entry " + entry, e);
        }
    }

    /** A class path as Maven's dependency:build-classpath writes it. */
    static List<Path> read(final Path classPathFile) {
        try {
            final String content = Files.readString(classPathFile).strip();
            return content.isEmpty() ? List.of()
                : Arrays.stream(content.split(File.pathSeparator)).map(Path::of).toList();
        } catch (final IOException e) {
            throw new UncheckedIOException("Missing " + classPathFile + "; build the module with Maven first", e);
        }
    }

    private static String className(final String path) {
        final Matcher versioned = VERSIONED.matcher(path);
        return versioned.matches() ? versioned.group(1) : path;
    }

    private static boolean isClass(final String name) {
        return name.endsWith(".class") && !name.endsWith("module-info.class");
    }
}
