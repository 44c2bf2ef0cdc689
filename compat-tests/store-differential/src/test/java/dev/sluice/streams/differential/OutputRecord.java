package dev.sluice.streams.differential;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.StreamSupport;
import org.apache.kafka.common.header.Headers;

/**
 * A record an application wrote, compared byte for byte: key, value, timestamp and headers, shown as
 * text when the bytes are printable and as hex otherwise.
 */
record OutputRecord(String topic, String key, String value, long timestamp, List<String> headers) {

    static OutputRecord of(final String topic, final byte[] key, final byte[] value, final long timestamp, final Headers headers) {
        final List<String> headerList = StreamSupport.stream(headers.spliterator(), false)
            .map(header -> header.key() + "=" + render(header.value()))
            .toList();
        return new OutputRecord(topic, render(key), render(value), timestamp, headerList);
    }

    static String render(final byte[] bytes) {
        if (bytes == null) {
            return "null";
        }
        for (final byte b : bytes) {
            if (b < 0x20 || b > 0x7e) {
                return "0x" + HexFormat.of().formatHex(bytes);
            }
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }
}
