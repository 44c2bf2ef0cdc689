//! Byte layouts of Kafka Streams' store keys and values.
