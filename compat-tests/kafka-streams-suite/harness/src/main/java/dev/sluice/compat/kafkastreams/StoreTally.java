package dev.sluice.compat.kafkastreams;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Reads the store routing's tally: one line per store kind, who served it (Sluice or Apache), the
 * supplier class and how many stores. The key keeps all but the count, tab-separated.
 */
final class StoreTally {

    private StoreTally() {
    }

    /** Whether the tally has a store kind that Sluice served. */
    static boolean anyServedBySluice(final Path file) throws IOException {
        return Files.exists(file)
            && Files.readAllLines(file).stream().anyMatch(line -> line.split("\t")[2].equals("Sluice"));
    }

    static void addTo(final Map<String, Long> tally, final Path file) throws IOException {
        if (!Files.exists(file)) {
            return;
        }
        for (final String line : Files.readAllLines(file)) {
            final int lastTab = line.lastIndexOf('\t');
            tally.merge(line.substring(0, lastTab), Long.parseLong(line.substring(lastTab + 1)), Long::sum);
        }
    }
}
