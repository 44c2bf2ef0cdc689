package dev.sluice.compat.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LongSummaryStatistics;

/** Suite 4's section of the compatibility report, as Markdown. */
final class EosCrashReport {

    private EosCrashReport() {
    }

    static void write(final Path file, final List<CrashRunResult> results) {
        final List<String> lines = new ArrayList<>();
        lines.add("## Suite 4: exactly-once crash check");
        lines.add("");
        lines.add("Per key the running min and sum of keyed integers, and behind a repartition topic the running max");
        lines.add("and count (a word count), on Sluice's runtime and on Apache Kafka Streams 4.4.0's, under exactly_once_v2 with");
        lines.add("enable.transactional.statestores=true, commit.interval.ms=100 and caching off. The application runs");
        lines.add("in its own JVM and is SIGKILLed at random moments while input is written, restarted each time, then");
        lines.add("left to catch up. The verifier recomputes every key's aggregates from the committed input and compares");
        lines.add("them with the committed output, record for record. A restore from the changelog's first offset when an earlier life");
        lines.add("had already found records there means the store was wiped. The time to the first processed record counts");
        lines.add("the lives that input reached before their kill.");
        lines.add("");
        lines.add("| Run on | Verdict | Kills | Input records | Records restored per restart | Max | Total | Wiped store restores | Launch to RUNNING, median / max | Launch to first processed record, median / max (lives) | Time |");
        lines.add("|---|---|---|---|---|---|---|---|---|---|---|");
        for (final CrashRunResult result : results) {
            final LongSummaryStatistics restored = result.restoredPerRestart().stream().mapToLong(Long::longValue).summaryStatistics();
            lines.add(String.format("| %s | %s | %d | %d | %s | %d | %d | %d | %s | %s (%d) | %d s |",
                result.target().description(),
                result.verification().mismatches().isEmpty() ? "exactly-once held" : result.verification().mismatches().size() + " mismatches",
                result.settings().kills(),
                result.verification().inputRecords(),
                result.restoredPerRestart(),
                restored.getMax(),
                restored.getSum(),
                result.wipes().size(),
                CrashRunResult.medianAndMax(result.toRunning()),
                CrashRunResult.medianAndMax(result.toFirstProcessed()),
                result.toFirstProcessed().size(),
                result.duration().toSeconds()));
        }
        for (final CrashRunResult result : results) {
            if (!result.verification().mismatches().isEmpty()) {
                lines.add("");
                lines.add("Mismatches on " + result.target().description() + " (first per key and topic):");
                result.verification().mismatches().forEach(mismatch -> lines.add("- " + mismatch));
            }
        }
        try {
            Files.createDirectories(file.getParent());
            Files.write(file, lines);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
