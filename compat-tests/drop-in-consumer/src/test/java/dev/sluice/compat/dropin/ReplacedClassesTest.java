package dev.sluice.compat.dropin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.apache.kafka.streams.state.Stores;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * sluice-kafka-streams holds every class of Apache's kafka-streams 4.4.0: unchanged, or replaced by Sluice's
 * with the same binary interface, so that Kafka Streams' own classes and a user's compiled code link against
 * it. A class Sluice leaves out must be one nothing else refers to (an anonymous class of a replaced one).
 */
class ReplacedClassesTest {

    private static final Path KAFKA_STREAMS = Path.of(System.getProperty("sluice.fixture.kafka.streams"));

    private static Map<String, byte[]> apache;
    private static Map<String, byte[]> sluice;

    @BeforeAll
    static void readBothJars() {
        apache = classBytes(KAFKA_STREAMS);
        sluice = classBytes(MavenClassPathTest.codeSource(Stores.class));
    }

    @Test
    void replacedClassesKeepKafkaStreamsBinaryInterface() throws Exception {
        final List<String> replaced = replacedClasses();
        assertTrue(replaced.contains("org.apache.kafka.streams.state.Stores"), () -> "replaced: " + replaced);
        assertTrue(replaced.contains("org.apache.kafka.streams.state.BuiltInDslStoreSuppliers$RocksDBDslStoreSuppliers"),
            () -> "replaced: " + replaced);

        final List<String> differences = new ArrayList<>();
        try (URLClassLoader apacheClasses = new KafkaStreamsFirstClassLoader(KAFKA_STREAMS.toUri().toURL())) {
            for (final String name : replaced) {
                differences.addAll(BinaryInterface.missingFrom(Class.forName(name, false, apacheClasses),
                    Class.forName(name, false, ReplacedClassesTest.class.getClassLoader())));
            }
        }
        assertEquals(List.of(), differences, "Sluice's classes lack what Kafka Streams' offer");
    }

    @Test
    void classesLeftOutAreReferencedByNoOtherClass() {
        final Set<String> leftOut = new TreeSet<>(apache.keySet());
        leftOut.removeAll(sluice.keySet());
        final Map<String, List<String>> referencedBy = new HashMap<>();
        for (final String missing : leftOut) {
            final byte[] name = missing.replace('.', '/').getBytes(StandardCharsets.UTF_8);
            sluice.forEach((holder, bytes) -> {
                if (contains(bytes, name)) {
                    referencedBy.computeIfAbsent(missing, m -> new ArrayList<>()).add(holder);
                }
            });
        }
        assertEquals(Map.of(), referencedBy, "classes of Kafka Streams missing from sluice-kafka-streams, and who needs them");
    }

    @Test
    void theCheckSeesAMissingMethod() throws Exception {
        // Apache's Stores against a class with none of its factories.
        try (URLClassLoader apacheClasses = new KafkaStreamsFirstClassLoader(KAFKA_STREAMS.toUri().toURL())) {
            final Class<?> apacheStores = Class.forName("org.apache.kafka.streams.state.Stores", false, apacheClasses);
            final List<String> missing = BinaryInterface.missingFrom(apacheStores, Object.class);
            assertTrue(missing.stream().anyMatch(line -> line.contains("persistentKeyValueStore(java.lang.String)")),
                () -> String.join("\n", missing));
        }
    }

    /** Classes present in both jars with different bytes: Sluice's replacements. */
    private static List<String> replacedClasses() {
        return apache.entrySet().stream()
            .filter(entry -> sluice.containsKey(entry.getKey()))
            .filter(entry -> !Arrays.equals(entry.getValue(), sluice.get(entry.getKey())))
            .map(Map.Entry::getKey)
            .sorted()
            .toList();
    }

    /** Class name to class file, of Kafka Streams' packages only. */
    private static Map<String, byte[]> classBytes(final Path entry) {
        final Map<String, byte[]> classes = new HashMap<>();
        for (final String file : ClassPathScan.classesOf(entry)) {
            if (file.startsWith("org/apache/kafka/streams/")) {
                classes.put(file.substring(0, file.length() - ".class".length()).replace('/', '.'), read(entry, file));
            }
        }
        return classes;
    }

    private static byte[] read(final Path entry, final String file) {
        try {
            if (entry.toFile().isDirectory()) {
                return java.nio.file.Files.readAllBytes(entry.resolve(file));
            }
            try (JarFile jar = new JarFile(entry.toFile())) {
                final JarEntry jarEntry = jar.getJarEntry(file);
                try (InputStream in = jar.getInputStream(jarEntry)) {
                    return in.readAllBytes();
                }
            }
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean contains(final byte[] haystack, final byte[] needle) {
        outer:
        for (int i = 0; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            // A longer name that starts with this one (Stores$1 vs Stores$10) is not a reference to it.
            final int after = i + needle.length;
            if (after < haystack.length && isNamePart(haystack[after])) {
                continue;
            }
            return true;
        }
        return false;
    }

    private static boolean isNamePart(final byte b) {
        return Character.isLetterOrDigit(b) || b == '$' || b == '_';
    }

    /** Loads Kafka Streams' classes from Apache's jar, everything else (clients, JDK) from the test's loader. */
    static final class KafkaStreamsFirstClassLoader extends URLClassLoader {

        KafkaStreamsFirstClassLoader(final URL kafkaStreamsJar) {
            super(new URL[] {kafkaStreamsJar}, ReplacedClassesTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(final String name, final boolean resolve) throws ClassNotFoundException {
            if (!name.startsWith("org.apache.kafka.streams.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                final Class<?> loaded = findLoadedClass(name);
                return loaded != null ? loaded : findClass(name);
            }
        }
    }

    /** What code compiled against one class may use of it: its public and protected members and supertypes. */
    static final class BinaryInterface {

        private BinaryInterface() {
        }

        /** What {@code reference} offers that {@code candidate} does not, one line each. */
        static List<String> missingFrom(final Class<?> reference, final Class<?> candidate) {
            final Set<String> offered = describe(candidate);
            return describe(reference).stream()
                .filter(member -> !offered.contains(member))
                .map(member -> reference.getName() + ": " + member)
                .toList();
        }

        private static Set<String> describe(final Class<?> type) {
            final Set<String> lines = new LinkedHashSet<>();
            if (!Modifier.isFinal(type.getModifiers())) {
                lines.add("not final");
            }
            lines.add(type.isInterface() ? "interface" : "class");
            for (final Class<?> supertype : supertypes(type)) {
                lines.add("is a " + supertype.getName());
            }
            for (Class<?> owner = type; owner != null; owner = owner.getSuperclass()) {
                for (final Method method : owner.getDeclaredMethods()) {
                    if (visible(method) && !method.isSynthetic()) {
                        lines.add(signature(method) + " returns " + method.getReturnType().getName());
                    }
                }
                for (final Field field : owner.getDeclaredFields()) {
                    if (visible(field)) {
                        lines.add(modifiers(field) + "field " + field.getName() + " " + field.getType().getName());
                    }
                }
            }
            for (final Method method : type.getMethods()) {
                lines.add(signature(method) + " returns " + method.getReturnType().getName());
            }
            for (final Constructor<?> constructor : type.getDeclaredConstructors()) {
                if (visible(constructor)) {
                    lines.add(signature(constructor));
                }
            }
            return lines;
        }

        private static Set<Class<?>> supertypes(final Class<?> type) {
            final Set<Class<?>> all = new LinkedHashSet<>();
            for (Class<?> owner = type; owner != null; owner = owner.getSuperclass()) {
                if (owner != type) {
                    all.add(owner);
                }
                addInterfaces(owner, all);
            }
            return all;
        }

        private static void addInterfaces(final Class<?> type, final Set<Class<?>> into) {
            for (final Class<?> implemented : type.getInterfaces()) {
                if (into.add(implemented)) {
                    addInterfaces(implemented, into);
                }
            }
        }

        private static boolean visible(final Member member) {
            return Modifier.isPublic(member.getModifiers()) || Modifier.isProtected(member.getModifiers());
        }

        private static String signature(final Executable executable) {
            final String parameters = Arrays.stream(executable.getParameterTypes()).map(Class::getName)
                .collect(Collectors.joining(","));
            final String name = executable instanceof Constructor ? "<init>" : executable.getName();
            return modifiers(executable) + name + "(" + parameters + ")";
        }

        private static String modifiers(final Member member) {
            final int modifiers = member.getModifiers();
            return (Modifier.isStatic(modifiers) ? "static " : "") + (Modifier.isPublic(modifiers) ? "" : "protected ");
        }
    }
}
