package org.apache.kafka.streams;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;

/**
 * Sluice's KafkaStreams must link wherever Apache's does: every public and protected member of
 * Kafka Streams 4.4.0's {@code KafkaStreams} and of its public nested types exists in Sluice's with
 * the same modifiers, generic signature and throws clause, and Sluice adds none.
 *
 * <p>Apache's classes are loaded from the kafka-streams jar (its path set by the build, property
 * {@code sluice.reference.kafka.streams.jar}) through a class loader of their own, so Sluice's
 * class of the same name cannot shadow them.
 */
class KafkaStreamsApiSurfaceTest {

    private static URLClassLoader apacheLoader;

    @BeforeAll
    static void loadApacheJar() throws Exception {
        final String jar = System.getProperty("sluice.reference.kafka.streams.jar");
        assertNotNull(jar, "sluice.reference.kafka.streams.jar is not set (the build sets it)");
        assertTrue(new File(jar).isFile(), "no kafka-streams jar at " + jar);
        // kafka-streams' own dependencies come from the jars this test runs with.
        apacheLoader = new URLClassLoader(new URL[] {
            new File(jar).toURI().toURL(),
            jarOf(Admin.class),
            jarOf(Logger.class)
        }, ClassLoader.getPlatformClassLoader());
    }

    @AfterAll
    static void closeLoader() throws Exception {
        apacheLoader.close();
    }

    private static URL jarOf(final Class<?> type) {
        return type.getProtectionDomain().getCodeSource().getLocation();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "org.apache.kafka.streams.KafkaStreams",
        "org.apache.kafka.streams.KafkaStreams$State",
        "org.apache.kafka.streams.KafkaStreams$StateListener",
        "org.apache.kafka.streams.KafkaStreams$CloseOptions"
    })
    void publicAndProtectedMembersMatchKafkaStreams(final String className) throws Exception {
        final Class<?> apache = Class.forName(className, false, apacheLoader);
        final Class<?> sluice = Class.forName(className, false, KafkaStreamsApiSurfaceTest.class.getClassLoader());
        assertTrue(sluice.getProtectionDomain().getCodeSource() == null
            || !sluice.getProtectionDomain().getCodeSource().getLocation().toString().contains("kafka-streams-"),
            "Sluice's " + className + " is not the one on the test class path");

        assertEquals(Modifier.toString(apache.getModifiers()), Modifier.toString(sluice.getModifiers()),
            className + " modifiers");
        assertEquals(String.valueOf(apache.getGenericSuperclass()), String.valueOf(sluice.getGenericSuperclass()),
            className + " superclass");
        assertEquals(typeNames(apache.getGenericInterfaces()), typeNames(sluice.getGenericInterfaces()),
            className + " interfaces");
        assertEquals(visibleMembers(apache), visibleMembers(sluice), className + " public and protected members");
    }

    @Test
    void publicNestedTypesMatchKafkaStreams() throws Exception {
        final Class<?> apache = Class.forName("org.apache.kafka.streams.KafkaStreams", false, apacheLoader);
        assertEquals(nestedTypes(apache), nestedTypes(KafkaStreams.class));
    }

    @Test
    void stateTransitionsMatchKafkaStreams() throws Exception {
        final Class<?> apache = Class.forName("org.apache.kafka.streams.KafkaStreams$State", false, apacheLoader);
        final Method apacheValid = apache.getMethod("isValidTransition", apache);
        for (final Object from : apache.getEnumConstants()) {
            for (final Object to : apache.getEnumConstants()) {
                final KafkaStreams.State sluiceFrom = KafkaStreams.State.valueOf(((Enum<?>) from).name());
                final KafkaStreams.State sluiceTo = KafkaStreams.State.valueOf(((Enum<?>) to).name());
                assertEquals(apacheValid.invoke(from, to), sluiceFrom.isValidTransition(sluiceTo), from + " -> " + to);
            }
            for (final String predicate : List.of("hasNotStarted", "isRunningOrRebalancing", "isShuttingDown",
                "hasCompletedShutdown", "hasStartedOrFinishedShuttingDown")) {
                assertEquals(apache.getMethod(predicate).invoke(from),
                    KafkaStreams.State.class.getMethod(predicate).invoke(KafkaStreams.State.valueOf(((Enum<?>) from).name())),
                    from + "." + predicate);
            }
        }
        assertEquals(apache.getEnumConstants().length, KafkaStreams.State.values().length);
    }

    private static Set<String> nestedTypes(final Class<?> type) {
        final Set<String> names = new TreeSet<>();
        for (final Class<?> nested : type.getDeclaredClasses()) {
            if (Modifier.isPublic(nested.getModifiers()) || Modifier.isProtected(nested.getModifiers())) {
                names.add(Modifier.toString(nested.getModifiers()) + " " + nested.getName());
            }
        }
        return names;
    }

    private static Set<String> visibleMembers(final Class<?> type) {
        final List<Member> members = new ArrayList<>();
        members.addAll(List.of(type.getDeclaredConstructors()));
        members.addAll(List.of(type.getDeclaredMethods()));
        members.addAll(List.of(type.getDeclaredFields()));
        final Set<String> signatures = new TreeSet<>();
        for (final Member member : members) {
            final int modifiers = member.getModifiers();
            if (member.isSynthetic() || !(Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers))) {
                continue;
            }
            signatures.add(signature(member) + deprecation(member));
        }
        return signatures;
    }

    private static String signature(final Member member) {
        if (member instanceof Method) {
            return ((Method) member).toGenericString();
        } else if (member instanceof Constructor) {
            return ((Constructor<?>) member).toGenericString();
        }
        return ((Field) member).toGenericString();
    }

    private static String deprecation(final Member member) {
        return ((AnnotatedElement) member).isAnnotationPresent(Deprecated.class) ? " @Deprecated" : "";
    }

    private static List<String> typeNames(final Type[] types) {
        final List<String> names = new ArrayList<>();
        for (final Type t : types) {
            names.add(t.getTypeName());
        }
        return names;
    }
}
