package org.apache.kafka.streams;

import static org.apache.kafka.streams.EngineTestSupport.props;
import static org.apache.kafka.streams.EngineTestSupport.waitFor;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.streams.testing.broker.LocalKafkaBroker;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.kstream.Consumed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine logs through slf4j, as Kafka Streams does: its records reach the application's logging
 * under {@code dev.sluice.core.*} loggers, at the levels those loggers have on (this module's tests
 * log {@code dev.sluice.core} at INFO, the rest at WARN).
 */
class NativeLogTest {

    @RegisterExtension
    static final LocalKafkaBroker BROKER = new LocalKafkaBroker();

    @TempDir
    Path stateDir;

    @Test
    void theEngineLogsEachAssignmentAtInfoUnderItsModulesLogger() throws Exception {
        final String input = "logged-input";
        BROKER.createTopic(input, 2);
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String())).foreach((key, value) -> { });
        final ByteArrayOutputStream logged = new ByteArrayOutputStream();
        final PrintStream stderr = System.err;
        // slf4j's simple logger writes to whatever System.err is when it logs.
        System.setErr(new PrintStream(new TeeStream(stderr, logged), true, StandardCharsets.UTF_8));
        try (KafkaStreams streams = new KafkaStreams(builder.build(), props(BROKER, "logged-app", stateDir))) {
            streams.start();
            waitFor(() -> streams.state() == KafkaStreams.State.RUNNING, "the application to run");
            waitFor(() -> logged.toString(StandardCharsets.UTF_8).contains(input + "-1"), "the assignment to be logged");
            streams.close(Duration.ofSeconds(30));
        } finally {
            System.setErr(stderr);
        }
        final String log = logged.toString(StandardCharsets.UTF_8);
        assertTrue(log.lines().anyMatch(line -> line.contains("INFO dev.sluice.core.engine.task_manager")
            && line.contains("assigned [") && line.contains(input + "-0") && line.contains(input + "-1")), log);
        assertTrue(log.lines().noneMatch(line -> line.contains("DEBUG dev.sluice.core")), "nothing finer than INFO: " + log);
    }

    /** Writes to the original stream and keeps a copy. */
    private static final class TeeStream extends OutputStream {

        private final PrintStream original;
        private final ByteArrayOutputStream copy;

        TeeStream(final PrintStream original, final ByteArrayOutputStream copy) {
            this.original = original;
            this.copy = copy;
        }

        @Override
        public void write(final int b) {
            original.write(b);
            copy.write(b);
        }

        @Override
        public void write(final byte[] bytes, final int offset, final int length) {
            original.write(bytes, offset, length);
            copy.write(bytes, offset, length);
        }
    }
}
