package dev.sluice.streams.state.internals;

import java.util.Arrays;

/**
 * The byte layout of the values Kafka Streams' layers put into a bytes store. A store records it with its
 * data; opened again with a layout that extends the recorded one (plain to timestamped, either to
 * headers-aware) it rewrites its values once, as Kafka Streams' own stores upgrade; opened with one that
 * cannot read them, it fails with a {@code ProcessorStateException}, as Kafka Streams refuses a downgrade.
 * The codes are the native store's.
 */
enum ValueLayout {
    /** The value alone. */
    PLAIN(0),
    /** Timestamp, then value. */
    TIMESTAMPED(1),
    /** Headers, timestamp, then value. */
    TIMESTAMPED_WITH_HEADERS(2),
    /** Headers, then value: session stores, whose sessions carry their own times. */
    WITH_HEADERS(3);

    /** What the native store answers when the values stayed as they were. */
    static final int NOT_UPGRADED = -1;

    private final int code;

    ValueLayout(final int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static ValueLayout ofCode(final int code) {
        return Arrays.stream(values()).filter(layout -> layout.code == code).findFirst()
            .orElseThrow(() -> new IllegalArgumentException(code + " is no value layout"));
    }
}
