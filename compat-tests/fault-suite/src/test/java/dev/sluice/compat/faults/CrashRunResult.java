package dev.sluice.compat.faults;

import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.compat.faults.Verifier.Verification;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What one crash check saw: per life of the application the restorations it began and the time from its
 * launch to RUNNING, and the verification.
 */
record CrashRunResult(Target target, CrashSettings settings, List<List<Restore>> restoresPerLife, List<Duration> toRunning,
                      Verification verification, Duration duration) {

    /** The median time from a launch to RUNNING. */
    Duration medianToRunning() {
        final List<Duration> sorted = toRunning.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    Duration maxToRunning() {
        return toRunning.stream().max(Duration::compareTo).orElseThrow();
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
