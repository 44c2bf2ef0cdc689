package dev.sluice.streams.state.internals;

import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * The {@code long} a Java object holds on a native object. Calls read it with {@link #open()}; closing
 * {@link #take()}s it, exactly once however many threads close, so the native object is released once
 * and every later call raises {@link InvalidStateStoreException} instead of reaching a released handle.
 */
final class NativeHandle {

    /** What {@link #openOrZero()} and {@link #take()} return once the handle was taken. */
    static final long TAKEN = 0;

    private final String closedMessage;
    private volatile long handle;

    /** Holds {@code handle}; {@code closedMessage} is what a call after close raises. */
    NativeHandle(final long handle, final String closedMessage) {
        this.handle = handle;
        this.closedMessage = closedMessage;
    }

    /** The handle; {@link InvalidStateStoreException} once it was taken. */
    long open() {
        final long open = handle;
        if (open == TAKEN) {
            throw new InvalidStateStoreException(closedMessage);
        }
        return open;
    }

    /** The handle, or {@link #TAKEN} once it was taken: for calls that have a harmless answer on a closed object. */
    long openOrZero() {
        return handle;
    }

    /** The handle for its owner to release, or {@link #TAKEN} when another close took it first. */
    synchronized long take() {
        final long open = handle;
        handle = TAKEN;
        return open;
    }
}
