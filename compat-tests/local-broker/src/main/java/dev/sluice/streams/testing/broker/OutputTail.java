package dev.sluice.streams.testing.broker;

import java.util.ArrayDeque;
import java.util.Deque;

/** The last lines a child process wrote, kept to explain a failure. */
final class OutputTail {

    private final int capacity;
    private final Deque<String> lines = new ArrayDeque<>();

    OutputTail(int capacity) {
        this.capacity = capacity;
    }

    synchronized void add(String line) {
        if (lines.size() == capacity) {
            lines.removeFirst();
        }
        lines.addLast(line);
    }

    synchronized String text() {
        return String.join(System.lineSeparator(), lines);
    }

    /** The broker's own {@code error: ...} line, or null when it wrote none. */
    synchronized String errorLine() {
        return lines.stream()
                .filter(line -> line.startsWith("error: "))
                .map(line -> line.substring("error: ".length()))
                .reduce((first, last) -> last)
                .orElse(null);
    }
}
