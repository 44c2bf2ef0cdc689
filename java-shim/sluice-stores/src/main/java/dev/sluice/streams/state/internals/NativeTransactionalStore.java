package dev.sluice.streams.state.internals;

/**
 * What every native store offers its Java owner for the state store contract: commit with offsets and
 * position, read them back, roll back, measure the staged writes, close. Closing twice is harmless.
 */
interface NativeTransactionalStore extends AutoCloseable {

    /** What {@link #committedOffset} returns when no offset is stored. */
    long NO_OFFSET = -1L;

    /** Commits the staged writes with {@link EntryFraming} offsets and, unless null, a new position. */
    void commit(byte[] offsets, byte[] position);

    long committedOffset(String topic, int partition);

    byte[] committedPosition();

    void rollback();

    /**
     * Brings the committed values to {@code layout} and records it (see {@link ValueLayout}), before any
     * write; returns the code of the layout they were upgraded from, or {@link ValueLayout#NOT_UPGRADED}.
     */
    int settleValueLayout(int layout);

    /** Bytes staged since the last commit; 0 once closed. */
    long approximateNumUncommittedBytes();

    @Override
    void close();
}
