package dev.sluice.bench.apps;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A benchmark run's sizes and choices, from environment variables (see {@link #fromEnvironment}).
 *
 * @param sizes          events per application: word-count lines, readings, orders, foreign-key orders
 * @param rounds         timed runs of each workload on each runtime, alternated
 * @param pacedRounds    paced runs of each workload on each runtime
 * @param pacedSeconds   how long a paced run sends its events
 * @param pacedRate      events per second in a paced run
 * @param warmupSeconds  how long after a paced run starts sending its latencies begin to count
 * @param jvmOptions     the application JVMs' options, the same for every runtime
 * @param runtimes       the runtimes the workloads run on
 * @param configs        Streams configs every run gets on top of the application's own
 */
record BenchSettings(Map<Application, Integer> sizes, int partitions, int rounds, int pacedRounds, int pacedSeconds,
                     int pacedRate, int warmupSeconds, List<String> jvmOptions, List<Workload> workloads,
                     List<Variant> runtimes, Map<String, String> configs, Path workDir, Path classpathDir) {

    static final String JVM_OPTIONS = "SLUICE_BENCH_JVM_OPTS";

    /**
     * The defaults (a run of about half an hour on two cores), each changed by its variable:
     * {@code SLUICE_BENCH_LINES}, {@code SLUICE_BENCH_READINGS}, {@code SLUICE_BENCH_ORDERS},
     * {@code SLUICE_BENCH_FK_ORDERS}, {@code SLUICE_BENCH_PARTITIONS}, {@code SLUICE_BENCH_ROUNDS},
     * {@code SLUICE_BENCH_PACED_ROUNDS}, {@code SLUICE_BENCH_PACED_SECONDS}, {@code SLUICE_BENCH_PACED_RATE},
     * {@code SLUICE_BENCH_WARMUP_SECONDS}, {@code SLUICE_BENCH_JVM_OPTS} (space-separated),
     * {@code SLUICE_BENCH_WORKLOADS} (comma-separated ids such as {@code word-count/eos/1t}) and
     * {@code SLUICE_BENCH_RUNTIMES} (comma-separated, of {@code apache}, {@code apache-txn}, {@code sluice}) and
     * {@code SLUICE_BENCH_CONFIGS} (comma-separated {@code KEY=VALUE} Streams configs for every run).
     * Rounds may be 0: {@code SLUICE_BENCH_PACED_ROUNDS=0} times throughput only.
     */
    static BenchSettings fromEnvironment(final Path workDir, final Path classpathDir) {
        final Map<Application, Integer> sizes = Map.of(
            Application.WORD_COUNT, number("SLUICE_BENCH_LINES", 150_000),
            Application.WINDOWED_TOTALS, number("SLUICE_BENCH_READINGS", 400_000),
            Application.ORDER_ENRICHMENT, number("SLUICE_BENCH_ORDERS", 300_000),
            Application.ORDER_CUSTOMERS, number("SLUICE_BENCH_FK_ORDERS", 60_000));
        return new BenchSettings(sizes, number("SLUICE_BENCH_PARTITIONS", 4), count("SLUICE_BENCH_ROUNDS", 3),
            count("SLUICE_BENCH_PACED_ROUNDS", 1), number("SLUICE_BENCH_PACED_SECONDS", 20),
            number("SLUICE_BENCH_PACED_RATE", 500), count("SLUICE_BENCH_WARMUP_SECONDS", 5),
            List.of(System.getenv().getOrDefault(JVM_OPTIONS, "-Xmx2g").trim().split("\\s+")),
            selection("SLUICE_BENCH_WORKLOADS", Workload.ALL, Workload::id),
            selection("SLUICE_BENCH_RUNTIMES", List.of(Variant.values()), Variant::id), configs("SLUICE_BENCH_CONFIGS"),
            workDir, classpathDir);
    }

    int size(final Application application) {
        return sizes.get(application);
    }

    /** The members of {@code all} whose ids {@code variable} lists, comma-separated; all when it is unset. */
    static <T> List<T> selection(final String variable, final List<T> all, final Function<T, String> id) {
        final String selection = System.getenv().getOrDefault(variable, "");
        if (selection.isBlank()) {
            return all;
        }
        return Arrays.stream(selection.split(",")).map(String::trim).map(wanted -> all.stream()
            .filter(member -> id.apply(member).equals(wanted)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException(variable + ": no " + wanted + "; there are "
                + all.stream().map(id).toList()))).toList();
    }

    private static Map<String, String> configs(final String variable) {
        final Map<String, String> configs = new LinkedHashMap<>();
        for (final String setting : System.getenv().getOrDefault(variable, "").split(",")) {
            if (setting.isBlank()) {
                continue;
            }
            final int equals = setting.indexOf('=');
            if (equals <= 0) {
                throw new IllegalArgumentException(variable + " wants KEY=VALUE settings, not " + setting);
            }
            configs.put(setting.substring(0, equals).trim(), setting.substring(equals + 1).trim());
        }
        return configs;
    }

    static int count(final String variable, final int defaultValue) {
        return value(variable, defaultValue, 0);
    }

    static int number(final String variable, final int defaultValue) {
        return value(variable, defaultValue, 1);
    }

    private static int value(final String variable, final int defaultValue, final int least) {
        final String value = System.getenv(variable);
        if (value == null || value.isBlank()) {
            return defaultValue;
        }
        try {
            final int number = Integer.parseInt(value.trim().replace("_", ""));
            if (number < least) {
                throw new NumberFormatException();
            }
            return number;
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(variable + " must be a whole number of at least " + least + ", not " + value);
        }
    }
}
