package dev.sluice.compat.faults;

import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.compat.faults.Verifier.Verification;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one crash check saw: per life of the application the restorations it began, the time from its
 * launch to RUNNING and, for the lives killed after input reached them, to its first processed record;
 * and the verification.
 */
record CrashRunResult(Target target, CrashSettings settings, List<List<Restore>> restoresPerLife, List<Duration> toRunning,
                      List<Duration> toFirstProcessed, Verification verification, Duration duration) {

    /** The median and the longest of {@code times}, in seconds, or a dash when there are none. */
    static String medianAndMax(final List<Duration> times) {
        if (times.isEmpty()) {
            return "—";
        }
        final List<Duration> sorted = times.stream().sorted().toList();
        return String.format("%.1f s / %.1f s", sorted.get(sorted.size() / 2).toMillis() / 1000.0,
            sorted.get(sorted.size() - 1).toMillis() / 1000.0);
    }

    /** Records restored by each restart, i.e. every life but the first. */
    List<Long> restoredPerRestart() {
        return restoresPerLife.subList(1, restoresPerLife.size()).stream()
            .map(restores -> restores.stream().mapToLong(Restore::restored).sum())
            .toList();
    }

    /**
     * Restorations that replayed records from the changelog's first offset although an earlier life had
     * already found records in that changelog: the store had held state and came back empty, it was
     * wiped. (A restore from the first offset that finds nothing committed is no wipe: the earlier lives'
     * transactions were all aborted, or none of their store commits went through before a kill.)
     */
    List<Restore> wipes() {
        final Set<String> seenWithRecords = new HashSet<>();
        final List<Restore> wipes = new ArrayList<>();
        for (final List<Restore> life : restoresPerLife) {
            life.stream()
                .filter(restore -> restore.from() == 0 && restore.restored() > 0 && seenWithRecords.contains(restore.storePartition()))
                .forEach(wipes::add);
            life.stream().filter(restore -> restore.to() > 0).forEach(restore -> seenWithRecords.add(restore.storePartition()));
        }
        return wipes;
    }
}
