package dev.sluice.streams.testing.broker;

import java.util.List;

/**
 * Runs a local broker in the foreground. Standard output carries exactly one line,
 * {@code bootstrap.servers=127.0.0.1:PORT}, once the broker answers metadata requests; logs
 * and errors go to standard error. SIGTERM or Ctrl-C stops the broker and deletes its data.
 *
 * <p>Exit codes: 1 when the broker cannot start, 2 for a bad command line.
 */
public final class BrokerMain {

    private BrokerMain() {
    }

    public static void main(String[] args) {
        quietLogging();
        List<String> arguments = List.of(args);
        BrokerOptions options;
        try {
            options = BrokerOptions.parse(arguments);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(BrokerOptions.USAGE);
            System.exit(2);
            return;
        }

        SingleNodeKRaftBroker broker = new SingleNodeKRaftBroker(options);
        Runtime.getRuntime().addShutdownHook(new Thread(broker::close, "broker-stop"));
        if (arguments.contains("--exit-with-parent")) {
            exitWithParent();
        }
        try {
            broker.start();
        } catch (BrokerStartException e) {
            // Reported before the shutdown hook deletes the data: that may make Kafka halt the JVM.
            System.err.println("error: " + e.getMessage());
            System.exit(1);
        }
        System.out.println("bootstrap.servers=" + broker.bootstrapServers());
        System.out.flush();
        broker.awaitShutdown();
    }

    // A launcher that dies without stopping its broker (a test JVM killed with SIGKILL, a
    // script killed before its trap ran) must not leave the broker running.
    private static void exitWithParent() {
        ProcessHandle.current().parent().ifPresent(parent -> parent.onExit().thenRun(() -> {
            System.err.println("the process that started the broker exited; stopping the broker");
            System.exit(0);
        }));
    }

    // Warnings and errors only, unless the user asked for more with the usual system property.
    private static void quietLogging() {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
    }
}
