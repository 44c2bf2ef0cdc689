package dev.sluice.compat.kafkastreams;

/** One console line per suite: the figures of both targets. */
final class Summary {

    private Summary() {
    }

    static String line(final SuiteResult suite) {
        final SuiteResult.Counts apache = suite.counts(suite.baseline());
        final SuiteResult.Counts sluice = suite.counts(suite.sluice());
        return suite.suite().name() + ": Apache " + apache.passed() + "/" + apache.run() + " passed ("
            + apache.notRunnable() + " not runnable); Sluice " + sluice.passed() + "/" + sluice.run() + " passed, "
            + suite.regressions().size() + " pass on Apache only";
    }
}
