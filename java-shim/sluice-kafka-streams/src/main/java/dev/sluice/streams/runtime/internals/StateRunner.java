package dev.sluice.streams.runtime.internals;

import java.nio.ByteBuffer;

/**
 * What keeps the stores of one task, as the engine restores into them: every {@link TaskRunner}, and the runner of
 * a standby replica, whose stores follow their changelogs and which never processes. Every method is called on the
 * engine thread that owns the task; the records cross as in {@link TaskRunner}.
 */
public interface StateRunner {

    /**
     * Framed offsets: each changelog partition of the task's logged stores with the offset of the last
     * changelog record its store committed (-1: none). Called once after creation, before restore.
     */
    byte[] committedChangelogOffsets();

    /** The task's local state is unusable: drop every store's data; every changelog is then restored from its start. */
    void wipeState();

    /** Framed consumed records of one or more changelog partitions, to put into their stores. */
    void restore(ByteBuffer records);

    /** Closes the stores; {@code clean} when what they hold is committed, otherwise it closes dirty. */
    void close(boolean clean);
}
