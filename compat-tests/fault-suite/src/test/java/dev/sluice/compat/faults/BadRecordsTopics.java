package dev.sluice.compat.faults;

import java.util.List;

/** The topics and application id of one bad-records run; the prefix keeps runs on a shared broker apart. */
record BadRecordsTopics(String prefix) {

    String applicationId() {
        return prefix + "-bad-records";
    }

    String input() {
        return prefix + "-input";
    }

    String sums() {
        return prefix + "-sums";
    }

    String echoes() {
        return prefix + "-echoes";
    }

    List<String> outputs() {
        return List.of(sums(), echoes());
    }
}
