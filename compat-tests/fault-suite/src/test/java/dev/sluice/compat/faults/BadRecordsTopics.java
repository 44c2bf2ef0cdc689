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

    /** Keys to labels, read as a global table. */
    String labels() {
        return prefix + "-labels";
    }

    String joined() {
        return prefix + "-joined";
    }

    String leftJoined() {
        return prefix + "-left-joined";
    }

    List<String> outputs() {
        return List.of(sums(), echoes(), joined(), leftJoined());
    }
}
