//! Transactional state stores (KIP-892 semantics, always on; KIP-1035 store-managed offsets).
//!
//! Every store stages the writes of the current commit in an overlay and releases them,
//! together with the changelog offsets they correspond to, in one atomic write at commit.
//!
//! - [`KeyValueStore`]: the contract of the key-value stores, implemented by
//!   [`RocksDbKeyValueStore`] ([`rocks`]) and [`InMemoryKeyValueStore`] ([`memory`]);
//!   window, session and versioned stores wrap one of them.
//! - [`WindowStore`](window::WindowStore) and [`SessionStore`](session::SessionStore): the
//!   contracts of the window and session stores, both [`SegmentedStore`]s, each implemented
//!   in Kafka Streams' two key layouts: [`key_ordered_window`] and [`key_ordered_session`]
//!   (its segmented stores), [`time_ordered_window`] and [`time_ordered_session`] (its
//!   time-ordered stores, scanned by time). [`versioned`] holds the versioned store.
//! - [`ReadView`]: a store seen at one [`IsolationLevel`], for other threads.
//! - [`record_cache`]: a stream thread's record cache (Kafka Streams' `ThreadCache`), whose
//!   entries live here rather than on the JVM heap.
//! - [`KeyBounds`] and [`Order`] describe scans; [`KeyValueIterator`] returns them.
//! - [`CommitMetadata`] and [`TopicPartition`] describe what a commit records;
//!   [`value_layout`] the layout of the values a store records with them, and its upgrades.
//! - [`Error`]: every failure, classified for the exceptions Kafka Streams users expect.

pub mod format;
pub mod key_ordered_session;
pub mod key_ordered_window;
pub mod memory;
pub mod record_cache;
pub mod rocks;
pub mod session;
pub mod time_ordered_session;
pub mod time_ordered_window;
pub mod value_layout;
pub mod versioned;
pub mod window;

mod bounds;
mod error;
mod iter;
mod kv;
mod offsets;
mod overlay;
mod segments;
mod stream_time;
mod transactional;

pub use bounds::KeyBounds;
pub use error::{Error, Result};
pub use iter::{KeyValue, KeyValueIterator, Order, StagedEntry};
pub use kv::{IsolationLevel, KeyValueStore, ReadView};
pub use memory::InMemoryKeyValueStore;
pub use offsets::{CommitMetadata, TopicPartition};
pub use rocks::RocksDbKeyValueStore;
pub use segments::SegmentedStore;
pub use transactional::TransactionalStore;
