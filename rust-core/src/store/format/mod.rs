//! Byte layouts of Kafka Streams 4.4 store keys and changelog records.
//!
//! State must move both ways between Apache Kafka Streams and Sluice through the changelog
//! topics, so every layout here is byte-identical to the one Kafka Streams 4.4.0 writes.
//! Each codec exists once; stores and the JNI layer call these functions rather than
//! slicing bytes themselves.
//!
//! Where each layout is used:
//!
//! | layout | bytes-store value / key (what the typed layers hand down) | changelog record |
//! |---|---|---|
//! | [`window_key`] key-first `key ‖ start(8) ‖ seq(4)` | on-disk key of the segmented window store | key of every window store changelog record |
//! | [`window_key`] prefixed time-first / key-first | on-disk keys of the time-ordered (indexed) window store | never |
//! | [`session_key`] key-first `key ‖ end(8) ‖ start(8)` | on-disk key of the segmented session store | key of every session store changelog record |
//! | [`session_key`] prefixed time-first / key-first | on-disk keys of the time-ordered session store | never |
//! | versioned | `put(key, value, ts)` | plain value, record timestamp = version timestamp, no headers |
//!
//! Store values (timestamped, headers-aware) are Kafka Streams' typed layers' business on the
//! JVM: the bytes stores keep them as they are given. All integers are big-endian two's
//! complement (Java's `ByteBuffer` default).

pub mod ordered_bytes;
pub mod session_key;
pub mod window_key;

use std::fmt;

/// Size of a serialized timestamp (a Java `long`).
pub const TIMESTAMP_SIZE: usize = 8;

/// Bytes that do not hold the layout they were decoded as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// Which layout was being decoded.
    pub layout: &'static str,
    /// What was wrong with the bytes.
    pub reason: String,
}

impl FormatError {
    pub(crate) fn new(layout: &'static str, reason: impl Into<String>) -> Self {
        FormatError {
            layout,
            reason: reason.into(),
        }
    }

    pub(crate) fn too_short(layout: &'static str, needed: usize, actual: usize) -> Self {
        FormatError::new(
            layout,
            format!("needs at least {needed} bytes, got {actual}"),
        )
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed {}: {}", self.layout, self.reason)
    }
}

impl std::error::Error for FormatError {}

/// Reads the big-endian `long` at `offset`; the caller has checked the length.
pub(crate) fn read_i64(bytes: &[u8], offset: usize) -> i64 {
    let mut buf = [0u8; 8];
    buf.copy_from_slice(&bytes[offset..offset + 8]);
    i64::from_be_bytes(buf)
}

/// Reads the big-endian `int` at `offset`; the caller has checked the length.
pub(crate) fn read_i32(bytes: &[u8], offset: usize) -> i32 {
    let mut buf = [0u8; 4];
    buf.copy_from_slice(&bytes[offset..offset + 4]);
    i32::from_be_bytes(buf)
}
