package dev.sluice.streams.runtime.internals;

import dev.sluice.streams.internals.OffsetFraming;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

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

    /**
     * {@link #committedChangelogOffsets()} framed from a state manager's changelog offsets, which are the next offset
     * to read of each store: the engine wants the last one in the store, -1 for none.
     */
    static byte[] lastOffsetsInStores(final Map<TopicPartition, Long> changelogOffsets) {
        final Map<TopicPartition, Long> last = new LinkedHashMap<>();
        changelogOffsets.forEach((changelog, next) -> last.put(changelog, next - 1));
        return OffsetFraming.write(last);
    }
}
