package dev.sluice.compat.faults;

import dev.sluice.compat.faults.ChildOutput.Restore;
import dev.sluice.compat.faults.Verifier.Verification;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What the second life of a {@link StateRun} did: its verification (none when it never ran), the
 * restorations it began, how long it took to reach RUNNING, and how it failed if it did.
 */
record StateRunResult(String name, Target runtime, Optional<Verification> verification, List<Restore> restores,
                      Duration toRunning, Optional<String> failure, Path log) {

    static StateRunResult didNotRun(final String name, final Target runtime, final String failure, final Path log) {
        return new StateRunResult(name, runtime, Optional.empty(), List.of(), Duration.ZERO, Optional.of(failure), log);
    }

    boolean exact() {
        return failure.isEmpty() && verification.map(result -> result.mismatches().isEmpty()).orElse(false);
    }

    /** The store partitions restored from their changelog's first offset, i.e. rebuilt from nothing. */
    List<String> restoredFromScratch() {
        return restores.stream().filter(restore -> restore.from() == 0 && restore.restored() > 0)
            .map(Restore::storePartition).distinct().sorted().toList();
    }

    String verdict() {
        if (failure.isPresent()) {
            return failure.get();
        }
        final List<String> mismatches = verification.orElseThrow().mismatches();
        return mismatches.isEmpty() ? "exact" : mismatches.size() + " mismatches, first: " + mismatches.get(0);
    }
}
