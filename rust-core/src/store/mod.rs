//! Transactional state stores (KIP-892 semantics, always on; KIP-1035 store-managed offsets).
//!
//! Every store stages the writes of the current commit in an overlay and releases them,
//! together with the changelog offsets they correspond to, in one atomic write at commit.

pub mod format;
