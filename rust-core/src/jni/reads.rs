//! What every store's read entry points share: the isolation flag, the scan direction and
//! handing a scan to Java as an iterator handle.

use std::sync::{Arc, Mutex};

use jni::sys::{jboolean, jlong};

use super::chunks::ChunkedScan;
use super::registry::SCANS;
use crate::store::{IsolationLevel, KeyValueIterator, Order};

/// `readCommitted` from Java: true = READ_COMMITTED, false = READ_UNCOMMITTED.
pub(crate) fn isolation(read_committed: jboolean) -> IsolationLevel {
    if read_committed {
        IsolationLevel::ReadCommitted
    } else {
        IsolationLevel::ReadUncommitted
    }
}

/// `reverse` from Java: Kafka Streams' backward reads.
pub(crate) fn order(reverse: jboolean) -> Order {
    if reverse {
        Order::Reverse
    } else {
        Order::Forward
    }
}

/// Registers a scan that `NativeKeyValueIterator` reads in chunks; returns its handle.
pub(crate) fn register_scan(entries: KeyValueIterator) -> jlong {
    SCANS.insert(Arc::new(Mutex::new(ChunkedScan::new(entries))))
}
