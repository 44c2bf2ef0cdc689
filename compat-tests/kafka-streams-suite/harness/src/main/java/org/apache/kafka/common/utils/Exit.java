package org.apache.kafka.common.utils;

/**
 * Test-support bridge, on the class path of both suite runs: the 4.3.1 test utilities
 * ({@code org.apache.kafka.test.TestUtils#tempDirectory}) register shutdown hooks through this
 * class, which kafka-clients 4.4.0 moved to {@code org.apache.kafka.common.utils.internals.Exit}.
 * Without it, every test that asks for a temporary directory dies of a linkage error before it
 * checks anything. Kafka Streams itself does not use this class; it only forwards the one call
 * the test utilities make.
 */
public final class Exit {

    private Exit() {
    }

    public static void addShutdownHook(final String name, final Runnable hook) {
        org.apache.kafka.common.utils.internals.Exit.addShutdownHook(name, hook);
    }
}
