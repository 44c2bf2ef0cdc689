package dev.sluice.compat.faults;

import java.util.List;

/** The topics and application id of one run; the prefix keeps runs on a shared broker apart. */
record Topics(String prefix) {

    String applicationId() {
        return prefix + "-eos-crash";
    }

    String input() {
        return prefix + "-input";
    }

    String min() {
        return prefix + "-min";
    }

    String sum() {
        return prefix + "-sum";
    }

    String max() {
        return prefix + "-max";
    }

    String cnt() {
        return prefix + "-cnt";
    }

    List<String> outputs() {
        return List.of(min(), sum(), max(), cnt());
    }
}
