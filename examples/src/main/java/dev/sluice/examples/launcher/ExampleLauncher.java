package dev.sluice.examples.launcher;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiFunction;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;

/**
 * What every example's {@code main} shares: the command line, the base configuration, and running
 * the application until SIGTERM (or until it fails).
 *
 * <pre>
 * &lt;main class&gt; [&lt;bootstrap.servers&gt; [&lt;application.id&gt; [&lt;processing.guarantee&gt; [&lt;state.dir&gt;]]]]
 *               [--output-topic NAME] [--config KEY=VALUE]...
 * </pre>
 *
 * Omitted bootstrap servers are {@code localhost:9092}, an omitted application id is the example's own, an omitted guarantee is Kafka Streams' default,
 * an omitted state directory Kafka Streams' default. The application prints {@code state: STATE} on
 * each state change; it exits with 0 after SIGTERM, with 1 when it stops in ERROR, with 2 on a bad
 * command line.
 */
public final class ExampleLauncher {

    private ExampleLauncher() {
    }

    /**
     * The configuration the examples run with: the given identity and guarantee, short commit
     * intervals (the examples and their tests want to see results soon), and input read from the
     * start of each topic.
     */
    public static Properties streamsConfig(final String bootstrapServers, final String applicationId,
                                           final String processingGuarantee, final Path stateDir) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        if (processingGuarantee != null) {
            props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, processingGuarantee);
        }
        if (stateDir != null) {
            props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        }
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        return props;
    }

    /**
     * Runs the application {@code topology} builds from the configuration and the output topic: returns
     * once SIGTERM has closed it, exits the JVM with 1 when it stops in ERROR, with 2 on a bad command line.
     */
    public static void run(final String[] args, final String defaultApplicationId, final String defaultOutputTopic,
                           final BiFunction<Properties, String, Topology> topology) throws InterruptedException {
        final CommandLine commandLine;
        try {
            commandLine = CommandLine.parse(args, defaultApplicationId, defaultOutputTopic);
        } catch (final IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println("arguments: [<bootstrap.servers> [<application.id> [<processing.guarantee> [<state.dir>]]]]"
                + " [--output-topic NAME] [--config KEY=VALUE]...");
            System.exit(2);
            return;
        }
        final Properties config = commandLine.streamsConfig();
        final KafkaStreams streams = new KafkaStreams(topology.apply(config, commandLine.outputTopic()), config);
        final CountDownLatch stopped = new CountDownLatch(1);
        streams.setStateListener((newState, oldState) -> {
            System.out.println("state: " + newState);
            if (newState == KafkaStreams.State.ERROR) {
                stopped.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
        if (streams.state() == KafkaStreams.State.ERROR) {
            streams.close();
            System.exit(1);
        }
    }

    /** The parsed command line. */
    private record CommandLine(String bootstrapServers, String applicationId, String processingGuarantee,
                               Path stateDir, String outputTopic, Map<String, String> overrides) {

        private static final String DEFAULT_BOOTSTRAP_SERVERS = "localhost:9092";

        static CommandLine parse(final String[] args, final String defaultApplicationId, final String defaultOutputTopic) {
            final List<String> positional = new ArrayList<>();
            final Map<String, String> overrides = new LinkedHashMap<>();
            String outputTopic = defaultOutputTopic;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--output-topic" -> outputTopic = valueOf(args, ++i, "--output-topic");
                    case "--config" -> {
                        final String setting = valueOf(args, ++i, "--config");
                        final int equals = setting.indexOf('=');
                        if (equals <= 0) {
                            throw new IllegalArgumentException("--config wants KEY=VALUE, not " + setting);
                        }
                        overrides.put(setting.substring(0, equals), setting.substring(equals + 1));
                    }
                    default -> positional.add(args[i]);
                }
            }
            if (positional.size() > 4) {
                throw new IllegalArgumentException("expected at most 4 positional arguments, got " + positional);
            }
            return new CommandLine(positional.isEmpty() ? DEFAULT_BOOTSTRAP_SERVERS : positional.get(0),
                positional.size() > 1 ? positional.get(1) : defaultApplicationId,
                positional.size() > 2 ? positional.get(2) : null,
                positional.size() > 3 ? Path.of(positional.get(3)) : null,
                outputTopic, overrides);
        }

        Properties streamsConfig() {
            final Properties props = ExampleLauncher.streamsConfig(bootstrapServers, applicationId, processingGuarantee, stateDir);
            props.putAll(overrides);
            return props;
        }

        private static String valueOf(final String[] args, final int index, final String option) {
            if (index >= args.length) {
                throw new IllegalArgumentException(option + " wants a value");
            }
            return args[index];
        }
    }
}
