package dev.sluice.streams.testing.broker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * How to start a local broker: its client port (0 picks a free one), how long it may take to
 * answer metadata requests, the directory its temporary data directory is created in, and
 * server settings that replace the broker's defaults (tests that need, say, another group
 * coordinator setting). The same options are the command line of {@link BrokerMain}.
 */
public record BrokerOptions(int port, Duration startupTimeout, Path tmpDir, Map<String, String> serverProperties) {

    static final String USAGE = "options: [--port N] [--startup-timeout SECONDS] [--tmp-dir DIR]"
            + " [--server-property KEY=VALUE]... [--exit-with-parent]";

    public BrokerOptions {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be between 0 and 65535, not " + port);
        }
        Objects.requireNonNull(startupTimeout, "startupTimeout");
        if (startupTimeout.isNegative() || startupTimeout.isZero()) {
            throw new IllegalArgumentException("startup timeout must be positive, not " + startupTimeout);
        }
        Objects.requireNonNull(tmpDir, "tmpDir");
        for (String key : serverProperties.keySet()) {
            if (BrokerProperties.OWN_KEYS.contains(key)) {
                throw new IllegalArgumentException(key + " is the launcher's own setting; it cannot be replaced");
            }
        }
        serverProperties = Map.copyOf(serverProperties);
    }

    public static BrokerOptions defaults() {
        return new BrokerOptions(0, Duration.ofSeconds(60), Path.of(System.getProperty("java.io.tmpdir")), Map.of());
    }

    public BrokerOptions withPort(int port) {
        return new BrokerOptions(port, startupTimeout, tmpDir, serverProperties);
    }

    public BrokerOptions withStartupTimeout(Duration startupTimeout) {
        return new BrokerOptions(port, startupTimeout, tmpDir, serverProperties);
    }

    public BrokerOptions withTmpDir(Path tmpDir) {
        return new BrokerOptions(port, startupTimeout, tmpDir, serverProperties);
    }

    /**
     * Sets a server property on top of the broker's defaults. Listeners, roles, node id and log
     * directories are the launcher's and cannot be set.
     */
    public BrokerOptions withServerProperty(String key, String value) {
        Map<String, String> properties = new TreeMap<>(serverProperties);
        properties.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return new BrokerOptions(port, startupTimeout, tmpDir, properties);
    }

    /** Parses {@link #USAGE}'s options except {@code --exit-with-parent}, which {@link BrokerMain} reads itself. */
    static BrokerOptions parse(List<String> args) {
        BrokerOptions options = defaults();
        for (int i = 0; i < args.size(); i++) {
            String name = args.get(i);
            switch (name) {
                case "--exit-with-parent" -> { }
                case "--port" -> options = options.withPort(parseNumber(name, valueAfter(args, i++)));
                case "--startup-timeout" -> options = options.withStartupTimeout(parseSeconds(name, valueAfter(args, i++)));
                case "--tmp-dir" -> options = options.withTmpDir(Path.of(valueAfter(args, i++)));
                case "--server-property" -> options = withServerProperty(options, name, valueAfter(args, i++));
                default -> throw new IllegalArgumentException("unknown option " + name);
            }
        }
        return options;
    }

    private static String valueAfter(List<String> args, int i) {
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException("missing value after " + args.get(i));
        }
        return args.get(i + 1);
    }

    List<String> toArguments() {
        List<String> args = new ArrayList<>();
        args.add("--port");
        args.add(Integer.toString(port));
        args.add("--startup-timeout");
        args.add(Double.toString(startupTimeout.toNanos() / 1e9));
        args.add("--tmp-dir");
        args.add(tmpDir.toString());
        new TreeMap<>(serverProperties).forEach((key, value) -> {
            args.add("--server-property");
            args.add(key + "=" + value);
        });
        return args;
    }

    private static BrokerOptions withServerProperty(BrokerOptions options, String name, String setting) {
        int equals = setting.indexOf('=');
        if (equals <= 0) {
            throw new IllegalArgumentException(name + " needs KEY=VALUE, not '" + setting + "'");
        }
        return options.withServerProperty(setting.substring(0, equals), setting.substring(equals + 1));
    }

    private static int parseNumber(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a whole number, not '" + value + "'");
        }
    }

    private static Duration parseSeconds(String name, String value) {
        try {
            return Duration.ofNanos(Math.round(Double.parseDouble(value) * 1e9));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " needs a number of seconds, not '" + value + "'");
        }
    }
}
