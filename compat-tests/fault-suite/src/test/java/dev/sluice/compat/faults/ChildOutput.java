package dev.sluice.compat.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.streams.KafkaStreams;

/**
 * The lines the child prints about itself and their reading by the test: state changes and each
 * store partition's restoration.
 */
final class ChildOutput {

    private static final String RUNNING = "EOS-STATE RUNNING";
    private static final String PENDING_ERROR = "EOS-STATE PENDING_ERROR";
    private static final String ERROR = "EOS-STATE ERROR";
    private static final String UNCAUGHT = "EOS-UNCAUGHT ";
    private static final String PROCESSED = "EOS-PROCESSED";
    private static final AtomicBoolean PROCESSED_ONE = new AtomicBoolean();
    private static final Pattern EXCEPTION = Pattern.compile("[A-Za-z]+(Exception|Error)\\b");
    private static final Pattern RESTORE_START = Pattern.compile("EOS-RESTORE-START store=(\\S+) partition=(\\d+) from=(\\d+) to=(\\d+)");
    private static final Pattern RESTORE_END = Pattern.compile("EOS-RESTORE-END store=(\\S+) partition=(\\d+) restored=(\\d+)");

    private ChildOutput() {
    }

    static void state(final KafkaStreams.State state) {
        System.out.println("EOS-STATE " + state);
    }

    static void restoreStart(final String store, final int partition, final long from, final long to) {
        System.out.printf("EOS-RESTORE-START store=%s partition=%d from=%d to=%d%n", store, partition, from, to);
    }

    static void restoreEnd(final String store, final int partition, final long restored) {
        System.out.printf("EOS-RESTORE-END store=%s partition=%d restored=%d%n", store, partition, restored);
    }

    /** The exception that ended a stream thread, with its causes, as the uncaught exception handler got it. */
    static void uncaught(final Throwable exception) {
        final StringBuilder line = new StringBuilder(UNCAUGHT).append(exception);
        for (Throwable cause = exception.getCause(); cause != null; cause = cause.getCause()) {
            line.append(" <- ").append(cause);
        }
        System.out.println(line);
    }

    /** Called for each input record the application processes; says so once per life. */
    static void processed() {
        if (PROCESSED_ONE.compareAndSet(false, true)) {
            System.out.println(PROCESSED);
        }
    }

    /** True once this life of the application processed an input record. */
    static boolean processedARecord(final List<String> lines) {
        return lines.contains(PROCESSED);
    }

    static boolean reachedRunning(final List<String> lines) {
        return lines.contains(RUNNING);
    }

    /** How many times the client has gone to RUNNING: once per finished rebalance. */
    static long runningTransitions(final List<String> lines) {
        return lines.stream().filter(RUNNING::equals).count();
    }

    /** True once the client has gone to ERROR (or is on its way there). */
    static boolean reachedError(final List<String> lines) {
        return lines.contains(PENDING_ERROR) || lines.contains(ERROR);
    }

    /** The first line that names an exception, for a report; the last line when none does. */
    static String firstError(final List<String> lines) {
        return lines.stream().filter(line -> EXCEPTION.matcher(line).find()).findFirst()
            .orElse(lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1));
    }

    /** What ended the first stream thread that failed, if the application reports it; else {@link #firstError}. */
    static String failure(final List<String> lines) {
        return lines.stream().filter(line -> line.startsWith(UNCAUGHT)).map(line -> line.substring(UNCAUGHT.length())).findFirst()
            .orElseGet(() -> firstError(lines));
    }

    /** The restorations one life of the child began, in order; killed ones count the records they set out to restore. */
    static List<Restore> restores(final List<String> lines) {
        final Map<String, Integer> latestByStorePartition = new HashMap<>();
        final List<Restore> restores = new ArrayList<>();
        for (final String line : lines) {
            final Matcher start = RESTORE_START.matcher(line);
            if (start.matches()) {
                final Restore restore = new Restore(start.group(1), Integer.parseInt(start.group(2)),
                    Long.parseLong(start.group(3)), Long.parseLong(start.group(4)));
                latestByStorePartition.put(restore.storePartition(), restores.size());
                restores.add(restore);
            }
            final Matcher end = RESTORE_END.matcher(line);
            if (end.matches()) {
                final Integer index = latestByStorePartition.get(end.group(1) + "-" + end.group(2));
                if (index != null) {
                    restores.set(index, restores.get(index).ended(Long.parseLong(end.group(3))));
                }
            }
        }
        return restores;
    }

    /** One restoration of a store partition from its changelog, from offset {@code from} to {@code to}. */
    record Restore(String store, int partition, long from, long to, long restored, boolean finished) {

        Restore(final String store, final int partition, final long from, final long to) {
            this(store, partition, from, to, to - from, false);
        }

        Restore ended(final long restoredRecords) {
            return new Restore(store, partition, from, to, restoredRecords, true);
        }

        String storePartition() {
            return store + "-" + partition;
        }
    }
}
