package dev.sluice.compat.kafkastreams;

import java.util.List;

/** One console line per suite: the figures of both targets. */
final class Summary {

    private Summary() {
    }

    static String line(final SuiteResult suite) {
        final SuiteResult.Counts apache = suite.counts(suite.baseline());
        final SuiteResult.Counts sluice = suite.counts(suite.sluice());
        final List<TestOutcome> regressions = suite.regressions();
        final IntendedDifferences.Split split = IntendedDifferences.load().split(suite.suite().name(), regressions);
        return suite.suite().name() + ": Apache " + apache.passed() + "/" + apache.run() + " passed ("
            + apache.notRunnable() + " not runnable); Sluice " + sluice.passed() + "/" + sluice.run() + " passed, "
            + regressions.size() + " pass on Apache only (" + split.documentedCount() + " where Sluice differs on purpose)";
    }
}
