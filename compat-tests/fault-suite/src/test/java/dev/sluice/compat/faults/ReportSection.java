package dev.sluice.compat.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * One scenario's section of the fault suite's report, in Markdown: a title, what was done, and a
 * table with a row per run. Each test class writes its own into {@code target/fault-suite-report/};
 * {@code make soak} puts them together.
 */
final class ReportSection {

    private static final Path DIRECTORY = Path.of("target", "fault-suite-report");

    private final List<String> lines = new ArrayList<>();

    ReportSection(final String title, final String description, final String... columns) {
        lines.add("## " + title);
        lines.add("");
        lines.add(description);
        lines.add("");
        lines.add("| " + String.join(" | ", columns) + " |");
        lines.add("|" + "---|".repeat(columns.length));
    }

    synchronized void row(final Object... cells) {
        final List<String> texts = new ArrayList<>();
        for (final Object cell : cells) {
            texts.add(String.valueOf(cell).replace("|", "\\|").replace("\n", " "));
        }
        lines.add("| " + String.join(" | ", texts) + " |");
    }

    /** Writes the section as {@code file} in the report directory. */
    synchronized void write(final String file) {
        try {
            Files.createDirectories(DIRECTORY);
            Files.write(DIRECTORY.resolve(file), lines);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
