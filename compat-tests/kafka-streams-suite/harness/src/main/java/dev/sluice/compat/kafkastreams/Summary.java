package dev.sluice.compat.kafkastreams;

/** One console line per suite: the figures of both targets. */
final class Summary {

    private Summary() {
    }

    static String line(final SuiteResult suite) {
        final SuiteResult.Counts apache = suite.counts(suite.baseline());
        final String sluice = suite.sluice().map(run -> {
            final SuiteResult.Counts c = suite.counts(run);
            return c.passed() + "/" + c.run() + " passed, " + suite.regressions().size() + " pass on Apache only";
        }).orElse("not run (no Sluice DSL store suppliers)");
        return suite.suite().name() + ": Apache " + apache.passed() + "/" + apache.run() + " passed ("
            + apache.notRunnable() + " not runnable); Sluice " + sluice;
    }
}
